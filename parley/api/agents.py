"""/api/v1/agents: hiring, changes, lifecycle, templates, policy and memory."""

from __future__ import annotations

from fastapi import APIRouter, Query

from parley.agents import staffing
from parley.agents.changes import AgentChange
from parley.agents.hiring import HireOrder, reassign
from parley.agents.lifecycle import refuse_node_session
from parley.agents.lookup import agent_by_name
from parley.agents.memory import forget, remember
from parley.agents.model import Lifecycle
from parley.agents.tools import check_tools
from parley.agents.variables import EnvChange
from parley.api.deps import Caller, Ctx
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.agents import (
    AgentOut,
    AgentPatch,
    ChangeOut,
    CloneIn,
    HireIn,
    MemoryOut,
    NoteIn,
    ReassignIn,
    RetireIn,
    WarnIn,
    WarningOut,
    WarnOut,
)
from parley.api.schemas.base import Page, page_of
from parley.errors import Conflict
from parley.people.accounts import require_owner
from parley.reads.agents import agents_page, changes_page, memory_page, warnings_page

router = APIRouter(tags=["agents"])


@router.post("/agents", status_code=201)
async def hire_agent(body: HireIn, caller: Caller, ctx: Ctx) -> AgentOut:
    """Hire an agent onto a node (owners); it is active once its workspace is made."""
    order = HireOrder(
        name=body.name,
        node=body.node,
        engram=body.engram,
        brain=body.brain,
        max_sessions=body.max_sessions,
        template=body.template,
        surge_threshold=body.surge_threshold,
        human=body.human,
        env=EnvChange(values=body.env, from_server=body.env_from_server),
        tools=None if body.tools is None else check_tools(body.tools),
        mcp_servers=tuple(server.server() for server in body.mcp),
        ask=None if body.ask is None else tuple(body.ask),
    )
    hired = await staffing.hire_agent(
        ctx, caller, order, body.allow_missing_key, body.clone_lifetime
    )
    return AgentOut.of(hired.agent).model_copy(update={"notices": hired.notices})


@router.patch("/agents/{name}")
async def set_agent(name: str, body: AgentPatch, caller: Caller, ctx: Ctx) -> AgentOut:
    """Change what is given of an agent's settings; what is left out stays as it is."""
    env = EnvChange(values=body.env, from_server=body.env_from_server, unset=body.unset_env)
    change = AgentChange(
        env=env,
        engram=body.engram,
        brain=body.brain,
        max_sessions=body.max_sessions,
        tools=None if body.tools is None else tuple(body.tools),  # checked after the owner
        mcp_servers=tuple(server.server() for server in body.mcp),
        ask=None if body.ask is None else tuple(body.ask),
        unset_mcp=tuple(body.unset_mcp),
    )
    changed = await staffing.change_settings(ctx, caller, name, change, body.allow_missing_key)
    return AgentOut.of(changed.agent).model_copy(update={"notices": changed.notices})


@router.get("/agents/{name}/changes")
async def list_changes(
    name: str, caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[ChangeOut]:
    """What owners changed of its settings (``PATCH``), newest first: who, when, old and new
    (variables by name only)."""
    async with ctx.store.transaction() as tx:
        found = await changes_page(tx, name, limit, before)
    return page_of(found, ChangeOut.of)


@router.get("/agents")
async def list_agents(
    caller: Caller,
    ctx: Ctx,
    lifecycle: list[Lifecycle] | None = Query(None),
    limit: Limit = DEFAULT_LIMIT,
    before: Before = None,
) -> Page[AgentOut]:
    """Agents by name, retired ones included (they stay readable), or those in ``lifecycle``."""
    async with ctx.store.transaction() as tx:
        found = await agents_page(tx, lifecycle, limit, before)
    return page_of(found, AgentOut.of)


@router.get("/agents/{name}")
async def show_agent(name: str, caller: Caller, ctx: Ctx) -> AgentOut:
    """One agent, retired ones included."""
    async with ctx.store.transaction() as tx:
        return AgentOut.of(await agent_by_name(tx, name))


@router.delete("/agents/{name}", status_code=204)
async def delete_agent(name: str, caller: Caller, ctx: Ctx) -> None:
    """An agent cannot be deleted: retire it instead (it stays readable)."""
    require_owner(caller, "remove agents")
    async with ctx.store.transaction() as tx:
        agent = await agent_by_name(tx, name)
    refuse_node_session(agent, "deleted")
    raise Conflict(f"agents are never deleted; retire {agent.name} instead (it stays readable)")


@router.post("/agents/{name}/reassign")
async def reassign_agent(name: str, body: ReassignIn, caller: Caller, ctx: Ctx) -> AgentOut:
    """Move an agent to another node (owners); refused while a turn of it runs, its queued
    text goes with it."""
    require_owner(caller, "reassign agents")
    async with ctx.store.transaction() as tx:
        agent = await reassign(tx, name, body.node)
    return AgentOut.of(await staffing.provisioned(ctx, agent))


@router.post("/agents/{name}/retire")
async def retire_agent(name: str, body: RetireIn, caller: Caller, ctx: Ctx) -> AgentOut:
    """Drain (no new work, running work finishes, then retired), or with force retire now."""
    async with ctx.store.transaction() as tx:  # stopped turns are cancelled once committed
        agent = await staffing.retire_agent(tx, ctx, caller, name, body.force, body.reason)
    return AgentOut.of(agent)


@router.post("/agents/{name}/warnings")
async def warn_agent(name: str, body: WarnIn, caller: Caller, ctx: Ctx) -> WarnOut:
    """Warn an agent with a reason (owners); at the configured count it is dismissed."""
    async with ctx.store.transaction() as tx:  # a dismissal stops the agent's turns
        outcome = await staffing.warn_agent(tx, ctx, caller, name, body.reason)
    return WarnOut(
        agent=AgentOut.of(outcome.agent), warnings=outcome.warnings, dismissed=outcome.dismissed
    )


@router.get("/agents/{name}/warnings")
async def list_warnings(
    name: str, caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[WarningOut]:
    """An agent's warnings, newest first."""
    async with ctx.store.transaction() as tx:
        found = await warnings_page(tx, name, limit, before)
    return page_of(found, WarningOut.of)


@router.post("/agents/{name}/clones", status_code=201)
async def clone_agent(name: str, body: CloneIn, caller: Caller, ctx: Ctx) -> AgentOut:
    """Hire a clone of a template, with a lifetime (owners)."""
    return AgentOut.of(await staffing.clone_agent(ctx, caller, name, body.name, body.lifetime))


@router.post("/agents/{name}/memory", status_code=201)
async def add_memory(name: str, body: NoteIn, caller: Caller, ctx: Ctx) -> MemoryOut:
    """Add a note to an agent's memory; answers with it."""
    async with ctx.store.transaction() as tx:
        return MemoryOut.of(await remember(tx, ctx.clock, name, body.note, caller))


@router.delete("/agents/{name}/memory/{note_id}", status_code=204)
async def remove_memory(name: str, note_id: int, caller: Caller, ctx: Ctx) -> None:
    """Remove a note from an agent's memory (owners, or the person who wrote it); the removal is
    recorded with its changes, the note's text with it."""
    async with ctx.store.transaction() as tx:
        await forget(tx, ctx.clock, name, note_id, caller)


@router.get("/agents/{name}/memory")
async def read_memory(
    name: str, caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[MemoryOut]:
    """An agent's memory, newest first, each note with its origin."""
    async with ctx.store.transaction() as tx:
        found = await memory_page(tx, name, limit, before)
    return page_of(found, MemoryOut.of)
