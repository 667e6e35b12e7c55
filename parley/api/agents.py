"""/api/v1/agents: hiring, changes, lifecycle, templates, policy and memory."""

from __future__ import annotations

from fastapi import APIRouter, Query

from parley.agents.changes import AgentChange, change_agent
from parley.agents.hiring import HireOrder, hire, reassign
from parley.agents.lifecycle import begin_draining, force_retire, refuse_node_session, retire
from parley.agents.lookup import agent_by_name
from parley.agents.memory import remember
from parley.agents.model import Agent, Lifecycle
from parley.agents.policy import warn
from parley.agents.templates import clone
from parley.agents.variables import EnvChange
from parley.agents.workspaces import provision
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
from parley.brains.keys import key_notices
from parley.brains.spec import parse_brain_spec
from parley.context import Context
from parley.durations import parse_duration
from parley.errors import Conflict
from parley.mesh.brain_checks import check_on_node
from parley.people.accounts import require_owner
from parley.reads.agents import agents_page, changes_page, memory_page, warnings_page
from parley.settings import Settings
from parley.text import MAX_REASON, check_length

router = APIRouter(tags=["agents"])


async def _provisioned(ctx: Context, agent: Agent) -> AgentOut:
    """Ask the node for the workspace now; if it is away, the agent waits as it is."""
    await provision(ctx.store, ctx.broker, agent)
    async with ctx.store.transaction() as tx:
        return AgentOut.of(await agent_by_name(tx, agent.name))


@router.post("/agents", status_code=201)
async def hire_agent(body: HireIn, caller: Caller, ctx: Ctx) -> AgentOut:
    """Hire an agent onto a node (owners); it is active once its workspace is made."""
    require_owner(caller, "hire agents")
    lifetime = (
        parse_duration(body.clone_lifetime, "clone lifetime") if body.clone_lifetime else None
    )
    order = HireOrder(
        name=body.name,
        node=body.node,
        engram=body.engram,
        brain=body.brain,
        max_sessions=body.max_sessions,
        template=body.template,
        surge_threshold=body.surge_threshold,
        clone_lifetime=lifetime,
        human=body.human,
        env=EnvChange(values=body.env, from_server=body.env_from_server),
    )
    remote = None
    if not body.human:
        brain = body.brain or ctx.settings.default_brain
        remote = await _checked_on_node(ctx, body.node, brain, body.allow_missing_key)
    async with ctx.store.transaction() as tx:
        agent = await hire(
            tx, ctx.clock, order, caller, ctx.settings.default_brain, remote is not None
        )
        # After the hire's own checks, so that those speak first; a refusal undoes the hire.
        if body.human:
            notices = []
        elif remote is not None:
            notices = remote
        else:
            notices = _key_notices(agent.brain, ctx.settings, body.allow_missing_key)
    hired = await _provisioned(ctx, agent)
    return hired.model_copy(update={"notices": notices})


async def _checked_on_node(
    ctx: Context, node: str, brain: str, allow_missing_key: bool
) -> list[str] | None:
    """A brain for another machine is checked there (its file, its key): that node's notices;
    None for the hub's own node, where it is checked in the hub's process."""
    if node == ctx.settings.node_name and ctx.settings.local_node:
        return None
    return await check_on_node(ctx.broker, node, brain, allow_missing_key)


def _key_notices(brain: str, settings: Settings, allow_missing_key: bool) -> list[str]:
    """A model brain without its API key is refused, or accepted with a notice when allowed."""
    spec = parse_brain_spec(brain)
    return key_notices(spec, settings, allow_missing_key)


@router.patch("/agents/{name}")
async def set_agent(name: str, body: AgentPatch, caller: Caller, ctx: Ctx) -> AgentOut:
    """Change what is given of an agent's settings; what is left out stays as it is."""
    require_owner(caller, "change agents")
    env = EnvChange(values=body.env, from_server=body.env_from_server, unset=body.unset_env)
    change = AgentChange(
        env=env, engram=body.engram, brain=body.brain, max_sessions=body.max_sessions
    )
    remote = None
    if body.brain is not None:
        async with ctx.store.transaction() as tx:
            node = (await agent_by_name(tx, name)).node_name
        remote = await _checked_on_node(ctx, node, body.brain, body.allow_missing_key)
    async with ctx.store.transaction() as tx:
        changed = await change_agent(tx, ctx.clock, name, change, caller, remote is not None)
        notices = remote or []
        if body.brain is not None and remote is None:  # a refusal undoes the change
            notices = _key_notices(changed.brain, ctx.settings, body.allow_missing_key)
    return AgentOut.of(changed).model_copy(update={"notices": notices})


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
    return await _provisioned(ctx, agent)


@router.post("/agents/{name}/retire")
async def retire_agent(name: str, body: RetireIn, caller: Caller, ctx: Ctx) -> AgentOut:
    """Drain (no new work, running work finishes, then retired), or with force retire now."""
    require_owner(caller, "retire agents")
    given = check_length(body.reason or "", MAX_REASON, "reason", may_be_empty=True).strip()
    reason = given or f"retired by {caller.name}"
    async with ctx.store.transaction() as tx:  # stopped turns are cancelled once committed
        agent = await agent_by_name(tx, name)
        refuse_node_session(agent, "retired")
        if body.force:
            await force_retire(tx, ctx.clock, agent, reason)
        else:
            await begin_draining(tx, agent, reason)
            if await tx.runs.count_open(agent.id) == 0:
                await retire(tx, ctx.clock, agent)
        return AgentOut.of(await agent_by_name(tx, name))


@router.post("/agents/{name}/warnings")
async def warn_agent(name: str, body: WarnIn, caller: Caller, ctx: Ctx) -> WarnOut:
    """Warn an agent with a reason (owners); at the configured count it is dismissed."""
    require_owner(caller, "warn agents")
    async with ctx.store.transaction() as tx:  # a dismissal stops the agent's turns
        outcome = await warn(
            tx, ctx.clock, name, body.reason, caller, ctx.settings.warnings_to_dismiss
        )
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
    require_owner(caller, "clone templates")
    lifetime = parse_duration(body.lifetime, "lifetime") if body.lifetime else None
    async with ctx.store.transaction() as tx:
        agent = await clone(tx, ctx.clock, name, body.name, lifetime)
    return await _provisioned(ctx, agent)


@router.post("/agents/{name}/memory", status_code=201)
async def add_memory(name: str, body: NoteIn, caller: Caller, ctx: Ctx) -> MemoryOut:
    """Add a note to an agent's memory; answers with it."""
    async with ctx.store.transaction() as tx:
        return MemoryOut.of(await remember(tx, ctx.clock, name, body.note, caller))


@router.get("/agents/{name}/memory")
async def read_memory(
    name: str, caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[MemoryOut]:
    """An agent's memory, newest first, each note with its origin."""
    async with ctx.store.transaction() as tx:
        found = await memory_page(tx, name, limit, before)
    return page_of(found, MemoryOut.of)
