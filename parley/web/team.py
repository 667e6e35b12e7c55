"""The agents pages: the staff by name with what each is doing, one agent with its memory,
warnings and changes, and the owners' verbs (hire, retire, warn, clone; its settings are
edited in ``web/editing``). Each verb is the
library's (``agents.staffing``) that the API calls too, owner check included."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from parley.actions.table import WORKSPACE_TOOLS
from parley.agents import staffing
from parley.agents.hiring import MAX_SESSIONS_LIMIT, HireOrder
from parley.agents.lookup import agent_by_name
from parley.agents.memory import remember
from parley.agents.model import Agent, Lifecycle, Modality
from parley.agents.tools import DEFAULT_ASK, DEFAULT_TOOLS, check_tools
from parley.brains.spec import BRAIN_KINDS, parse_brain_spec
from parley.durations import format_duration
from parley.errors import Invalid
from parley.people.accounts import require_owner
from parley.reads.agents import agents_page, changes_page, memory_page, warnings_page
from parley.reads.directory import nodes_page
from parley.reads.model import MAX_LIMIT
from parley.web.forms import Form
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, Viewer, WebParts, as_page

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])


@dataclass(frozen=True)
class Staffed:
    """An agent as a row of the list: with its turns running and waiting."""

    agent: Agent
    running: int
    waiting: int


@router.get("/agents")
async def agents_list(
    request: Request,
    viewer: Viewer,
    ctx: Ctx,
    web: WebParts,
    lifecycle: str = "",
    before: str | None = None,
) -> Response:
    shown = [_lifecycle(lifecycle)] if lifecycle else None
    async with ctx.store.transaction() as tx:
        found = await agents_page(tx, shown, before=before)
        counts = await tx.runs.open_counts([agent.id for agent in found.items])
        # The hire form offers the nodes by name; only owners see it.
        nodes = (await nodes_page(tx, MAX_LIMIT)).items if viewer.person.is_owner else []
    rows = [Staffed(agent, *counts.get(agent.id, (0, 0))) for agent in found.items]
    return web.pages.page(
        request,
        "agents.html",
        viewer,
        rows=rows,
        page=found,
        lifecycle=lifecycle,
        lifecycles=[state.value for state in Lifecycle],
        nodes=[node.name for node in nodes],
        default_brain=ctx.settings.default_brain,
        max_sessions=MAX_SESSIONS_LIMIT,
        workspace_tools=WORKSPACE_TOOLS,
        default_tools=DEFAULT_TOOLS,
        default_ask=DEFAULT_ASK,
    )


@router.post("/agents")
async def agents_hire(posted: Post, ctx: Ctx) -> Response:
    # The library's owner rule first: a member hears "owners only", not what their form lacks.
    require_owner(posted.viewer.person, "hire agents")
    form = posted.form
    order = _hire_order(form)
    lifetime = form.get("clone_lifetime").strip() or None
    hired = await staffing.hire_agent(
        ctx, posted.viewer.person, order, form.flag("allow_missing_key"), lifetime
    )
    said = " ".join([f"Hired {hired.agent.name} ({hired.agent.lifecycle.value}).", *hired.notices])
    return back_to(f"/agents/{hired.agent.name}", said)


@router.get("/agents/{name}")
async def agent_page(
    name: str, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts, before: str | None = None
) -> Response:
    async with ctx.store.transaction() as tx:
        agent = await agent_by_name(tx, name)
        counts = await tx.runs.open_counts([agent.id])
        memory = await memory_page(tx, name, before=before)
        warnings = await warnings_page(tx, name, MAX_LIMIT)
        changes = await changes_page(tx, name, MAX_LIMIT)
    running, waiting = counts.get(agent.id, (0, 0))
    return web.pages.page(
        request,
        "agent.html",
        viewer,
        agent=agent,
        running=running,
        waiting=waiting,
        memory=memory,
        warnings=warnings.items,
        changes=changes.items,
        may_staff=viewer.person.is_owner and _staffable(agent),
        may_edit=viewer.person.is_owner and agent.lifecycle is not Lifecycle.RETIRED,
        brain=None if agent.modality is Modality.HUMAN else parse_brain_spec(agent.brain),
        brain_kinds=BRAIN_KINDS,
        max_sessions=MAX_SESSIONS_LIMIT,
        workspace_tools=WORKSPACE_TOOLS,
        lifetime=_lifetime(agent),
    )


@router.post("/agents/{name}/retire")
async def agent_retire(name: str, posted: Post, ctx: Ctx) -> Response:
    force = posted.form.get("mode") == "force"
    reason = posted.form.get("reason")
    async with ctx.store.transaction() as tx:  # stopped turns are cancelled once committed
        agent = await staffing.retire_agent(tx, ctx, posted.viewer.person, name, force, reason)
    return back_to(f"/agents/{name}", f"{agent.name} is {agent.lifecycle.value}.")


@router.post("/agents/{name}/warn")
async def agent_warn(name: str, posted: Post, ctx: Ctx) -> Response:
    reason = posted.form.get("reason")
    async with ctx.store.transaction() as tx:  # a dismissal stops the agent's turns
        outcome = await staffing.warn_agent(tx, ctx, posted.viewer.person, name, reason)
    said = f"Warned {name} ({outcome.warnings} warning(s))."
    if outcome.dismissed:
        said += f" {name} is dismissed: retired now."
    return back_to(f"/agents/{name}", said)


@router.post("/agents/{name}/clone")
async def agent_clone(name: str, posted: Post, ctx: Ctx) -> Response:
    form = posted.form
    clone_name = form.get("name").strip() or None
    lifetime = form.get("lifetime").strip() or None
    made = await staffing.clone_agent(ctx, posted.viewer.person, name, clone_name, lifetime)
    return back_to(f"/agents/{made.name}", f"Cloned {name} as {made.name}.")


@router.post("/agents/{name}/memory")
async def agent_remember(name: str, posted: Post, ctx: Ctx) -> Response:
    async with ctx.store.transaction() as tx:
        await remember(tx, ctx.clock, name, posted.form.get("note"), posted.viewer.person)
    return back_to(f"/agents/{name}", "Noted.")


def _hire_order(form: Form) -> HireOrder:
    """The hire form as the library's order; the library checks the rest (names, engram,
    brain, the session cap's range, template options)."""
    human = form.required("human_person", "the person who answers") if form.flag("human") else None
    sessions = form.number("max_sessions", "max sessions", 1, MAX_SESSIONS_LIMIT)
    return HireOrder(
        name=form.required("name", "name"),
        node=form.required("node", "node"),
        engram=form.get("engram").strip(),
        brain=None if human else (form.get("brain").strip() or None),
        max_sessions=1 if sessions is None else sessions,
        template=form.flag("template"),
        human=human,
        tools=check_tools(form.all("tools")) if form.flag("tools_listed") else None,
        ask=tuple(form.all("ask")) if form.flag("tools_listed") else None,
    )


def _lifecycle(value: str) -> Lifecycle:
    try:
        return Lifecycle(value)
    except ValueError:
        known = ", ".join(state.value for state in Lifecycle)
        raise Invalid(f"lifecycle is one of {known}, not {value!r}", field="lifecycle") from None


def _lifetime(agent: Agent) -> str | None:
    seconds = agent.clone_lifetime_seconds
    return None if seconds is None else format_duration(seconds)


def _staffable(agent: Agent) -> bool:
    """The owners' verbs apply to hired agents still working (node sessions have none)."""
    return not agent.is_node_session and agent.lifecycle is not Lifecycle.RETIRED
