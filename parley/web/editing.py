"""Editing an agent in place, on its page: what ``parley agent set`` edits (engram, brain, max
sessions, tools and the ones that ask first, variables, MCP servers), its memory notes removed,
and a node's engram. Each verb is the library's that the API calls too (``staffing``,
``memory.forget``, ``set_node_engram``), owner check included; a refusal goes back to the form
with what was typed (``web/errors.back_to_the_form``)."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from parley.agents import staffing
from parley.agents.changes import AgentChange
from parley.agents.hiring import MAX_SESSIONS_LIMIT
from parley.agents.lookup import agent_by_name
from parley.agents.mcp import parse_server
from parley.agents.memory import forget
from parley.agents.model import Agent
from parley.agents.variables import EnvChange
from parley.brains.spec import parse_brain_spec
from parley.mesh.nodes import set_node_engram
from parley.people.accounts import require_owner
from parley.web.forms import Form
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, as_page

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])

SAVED = "Saved: its next turn works with the change."


@router.post("/agents/{name}/settings")
async def agent_settings(name: str, posted: Post, ctx: Ctx) -> Response:
    require_owner(posted.viewer.person, "change agents")  # before what the form lacks
    async with ctx.store.transaction() as tx:
        agent = await agent_by_name(tx, name)
    change = _settings_change(agent, posted.form)
    if change.is_empty:
        return back_to(f"/agents/{name}", "Nothing changed: the form held the settings it has.")
    allow_missing_key = posted.form.flag("allow_missing_key")
    return await _changed(ctx, posted, name, change, allow_missing_key)


@router.post("/agents/{name}/tools")
async def agent_tools(name: str, posted: Post, ctx: Ctx) -> Response:
    form = posted.form
    ask = form.all("ask") + form.get("ask_more").replace(",", " ").split()
    change = AgentChange(tools=tuple(form.all("tools")), ask=tuple(ask))
    return await _changed(ctx, posted, name, change)


@router.post("/agents/{name}/variables")
async def agent_variable(name: str, posted: Post, ctx: Ctx) -> Response:
    require_owner(posted.viewer.person, "change agents")
    form = posted.form
    variable = form.required("variable", "the variable's name")
    if form.flag("from_server"):
        env = EnvChange(from_server=(variable,))
    else:
        env = EnvChange(values={variable: form.get("value")})
    return await _changed(ctx, posted, name, AgentChange(env=env))


@router.post("/agents/{name}/variables/{variable}/remove")
async def agent_variable_remove(name: str, variable: str, posted: Post, ctx: Ctx) -> Response:
    return await _changed(ctx, posted, name, AgentChange(env=EnvChange(unset=(variable,))))


@router.post("/agents/{name}/mcp")
async def agent_mcp(name: str, posted: Post, ctx: Ctx) -> Response:
    require_owner(posted.viewer.person, "change agents")
    form = posted.form
    server = form.required("server", "the server's name")
    target = form.required("target", "its command or URL")
    change = AgentChange(mcp_servers=(parse_server(f"{server}={target}"),))
    return await _changed(ctx, posted, name, change)


@router.post("/agents/{name}/mcp/{server}/remove")
async def agent_mcp_remove(name: str, server: str, posted: Post, ctx: Ctx) -> Response:
    return await _changed(ctx, posted, name, AgentChange(unset_mcp=(server,)))


@router.post("/agents/{name}/memory/{note_id}/remove")
async def agent_forget(name: str, note_id: int, posted: Post, ctx: Ctx) -> Response:
    async with ctx.store.transaction() as tx:
        await forget(tx, ctx.clock, name, note_id, posted.viewer.person)
    return back_to(f"/agents/{name}", f"Note {note_id} removed: its next turn is given the rest.")


@router.post("/nodes/{name}/engram")
async def node_engram(name: str, posted: Post, ctx: Ctx) -> Response:
    require_owner(posted.viewer.person, "set a node's engram")
    async with ctx.store.transaction() as tx:
        await set_node_engram(tx, name, posted.form.get("engram"))
    return back_to(f"/nodes/{name}/exchanges", f"Saved node {name}'s engram.")


async def _changed(
    ctx: Ctx, posted: Post, name: str, change: AgentChange, allow_missing_key: bool = False
) -> Response:
    person = posted.viewer.person
    changed = await staffing.change_settings(ctx, person, name, change, allow_missing_key)
    return back_to(f"/agents/{name}", " ".join([SAVED, *changed.notices]))


def _settings_change(agent: Agent, form: Form) -> AgentChange:
    """What the settings form changes: the fields it holds that differ from the agent's (a
    brain unchanged is not checked again, so an engram is saved whatever its key's state)."""
    engram = form.get("engram") if "engram" in form.fields else None
    brain = _brain(form) if "brain_kind" in form.fields else None
    sessions = form.number("max_sessions", "max sessions", 1, MAX_SESSIONS_LIMIT)
    return AgentChange(
        engram=None if engram == agent.engram else engram,
        brain=None if brain == agent.brain else brain,
        max_sessions=None if sessions == agent.max_sessions else sessions,
    )


def _brain(form: Form) -> str:
    """The picker's kind and argument as a brain spec, checked (``field="brain"``)."""
    kind = form.get("brain_kind").strip()
    argument = "" if kind == "offline" else form.get("brain_argument").strip()
    return str(parse_brain_spec(f"{kind}:{argument}" if argument else kind))
