"""Staffing as the edges ask for it (the API and the page alike): hiring with its brain checked
where it will run and its workspace asked for, changing its settings (a new brain checked there
too), cloning, warning, retiring by draining or at once.
Each verb checks that its caller is an owner, so that no edge can forget to."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from parley.agents.changes import AgentChange, change_agent
from parley.agents.hiring import HireOrder, hire
from parley.agents.lifecycle import begin_draining, force_retire, refuse_node_session, retire
from parley.agents.lookup import agent_by_name
from parley.agents.model import Agent
from parley.agents.policy import WarnOutcome, warn
from parley.agents.templates import clone
from parley.agents.workspaces import provision
from parley.brains.keys import key_notices
from parley.brains.spec import parse_brain_spec
from parley.broker.port import Broker
from parley.clock import Clock
from parley.durations import parse_duration
from parley.node.brain_checks import check_on_node
from parley.people.accounts import require_owner
from parley.people.model import Person
from parley.settings import Settings
from parley.store import Store, Tx
from parley.text import MAX_REASON, check_length


class Parts(Protocol):
    """What staffing needs of the running installation: ``parley.context.Context`` is one,
    named only by its parts here (the context imports the hub, which imports agents)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def store(self) -> Store: ...
    @property
    def broker(self) -> Broker: ...
    @property
    def clock(self) -> Clock: ...


@dataclass(frozen=True)
class Hired:
    """The agent as it is after its workspace was asked for, and warnings about the hire (such
    as a model brain whose API key is missing, when that was allowed)."""

    agent: Agent
    notices: list[str]


async def hire_agent(
    ctx: Parts,
    by: Person,
    order: HireOrder,
    allow_missing_key: bool = False,
    clone_lifetime: str | None = None,
) -> Hired:
    """Hire an agent onto a node (owners); it is active once its workspace is made.
    ``clone_lifetime`` as written ("2h"), read after the owner check so a member hears that."""
    require_owner(by, "hire agents")
    if clone_lifetime:
        order = replace(order, clone_lifetime=parse_duration(clone_lifetime, "clone lifetime"))
    remote = None
    if not order.human:
        brain = order.brain or ctx.settings.default_brain
        remote = await checked_on_node(ctx, order.node, brain, allow_missing_key)
    async with ctx.store.transaction() as tx:
        agent = await hire(tx, ctx.clock, order, by, ctx.settings.default_brain, remote is not None)
        # After the hire's own checks, so that those speak first; a refusal undoes the hire.
        if order.human:
            notices: list[str] = []
        elif remote is not None:
            notices = remote
        else:
            notices = key_notices_for(agent.brain, ctx.settings, allow_missing_key)
    return Hired(await provisioned(ctx, agent), notices)


async def change_settings(
    ctx: Parts, by: Person, name: str, change: AgentChange, allow_missing_key: bool = False
) -> Hired:
    """Change what ``change`` gives of an agent's settings (owners); a new brain is checked on
    the agent's node, and a refusal there changes nothing."""
    require_owner(by, "change agents")
    remote = None
    if change.brain is not None:
        async with ctx.store.transaction() as tx:
            node = (await agent_by_name(tx, name)).node_name
        remote = await checked_on_node(ctx, node, change.brain, allow_missing_key)
    async with ctx.store.transaction() as tx:
        changed = await change_agent(
            tx,
            ctx.clock,
            name,
            change,
            by,
            remote is not None,
            ctx.settings.node_sessions_may_run,
        )
        notices = remote or []
        if change.brain is not None and remote is None:  # a refusal undoes the change
            notices = key_notices_for(changed.brain, ctx.settings, allow_missing_key)
    return Hired(changed, notices)


async def clone_agent(
    ctx: Parts, by: Person, template: str, name: str | None, lifetime: str | None
) -> Agent:
    """Hire a clone of a template, with a lifetime as written ("2h"; owners)."""
    require_owner(by, "clone templates")
    parsed = parse_duration(lifetime, "lifetime") if lifetime else None
    async with ctx.store.transaction() as tx:
        agent = await clone(tx, ctx.clock, template, name, parsed)
    return await provisioned(ctx, agent)


async def retire_agent(
    tx: Tx, ctx: Parts, by: Person, name: str, force: bool, reason: str | None
) -> Agent:
    """Drain (no new work, running work finishes, then retired: at once if nothing is open), or
    with ``force`` retire now (owners). Stopped turns are cancelled once ``tx`` commits."""
    require_owner(by, "retire agents")
    given = check_length(reason or "", MAX_REASON, "reason", may_be_empty=True).strip()
    why = given or f"retired by {by.name}"
    agent = await agent_by_name(tx, name)
    refuse_node_session(agent, "retired")
    if force:
        await force_retire(tx, ctx.clock, agent, why)
    else:
        await begin_draining(tx, agent, why)
        if await tx.runs.count_open(agent.id) == 0:
            await retire(tx, ctx.clock, agent)
    return await agent_by_name(tx, name)


async def warn_agent(tx: Tx, ctx: Parts, by: Person, name: str, reason: str) -> WarnOutcome:
    """Warn an agent with a reason (owners); at the configured count it is dismissed (its turns
    stopped once ``tx`` commits)."""
    require_owner(by, "warn agents")
    return await warn(tx, ctx.clock, name, reason, by, ctx.settings.warnings_to_dismiss)


async def provisioned(ctx: Parts, agent: Agent) -> Agent:
    """Ask the node for the workspace now; if it is away, the agent waits as it is."""
    await provision(ctx.store, ctx.broker, agent)
    async with ctx.store.transaction() as tx:
        return await agent_by_name(tx, agent.name)


async def checked_on_node(
    ctx: Parts, node: str, brain: str, allow_missing_key: bool
) -> list[str] | None:
    """A brain for another machine is checked there (its file, its key): that node's notices;
    None for the hub's own node, where it is checked in the hub's process."""
    if node == ctx.settings.node_name and ctx.settings.local_node:
        return None
    return await check_on_node(ctx.broker, node, brain, allow_missing_key)


def key_notices_for(brain: str, settings: Settings, allow_missing_key: bool) -> list[str]:
    """A model brain without its API key is refused, or accepted with a notice when allowed."""
    return key_notices(parse_brain_spec(brain), settings, allow_missing_key)
