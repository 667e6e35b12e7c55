"""Hiring an agent onto a node, and reassigning it to another one while it is idle."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from parley.agents.lifecycle import refuse_node_session
from parley.agents.lookup import agent_by_name
from parley.agents.mcp import check_servers
from parley.agents.model import Agent, Lifecycle, McpServer, Modality
from parley.agents.tools import DEFAULT_ASK, DEFAULT_TOOLS, check_ask, check_tools, stored
from parley.agents.variables import EnvChange, change_env
from parley.brains.spec import check_brain, parse_brain_spec
from parley.clock import Clock
from parley.errors import Conflict, Invalid
from parley.mesh.nodes import check_engram, node_by_name
from parley.naming import check_name
from parley.people.accounts import person_by_name
from parley.people.model import Person
from parley.store import Tx

MAX_SESSIONS_LIMIT = 1000
MAX_SURGE_THRESHOLD = 1_000_000
HUMAN_BRAIN = "human"


@dataclass(frozen=True)
class HireOrder:
    name: str
    node: str
    engram: str = ""
    brain: str | None = None
    max_sessions: int = 1
    template: bool = False
    surge_threshold: int | None = None
    clone_lifetime: timedelta | None = None
    human: str | None = None
    env: EnvChange = field(default_factory=EnvChange)
    # Its workspace tools; None: the read-only ones.
    tools: tuple[str, ...] | None = None
    # Its tools that ask first; None: run.
    ask: tuple[str, ...] | None = None
    mcp_servers: tuple[McpServer, ...] = ()


def check_max_sessions(value: int) -> int:
    if not 1 <= value <= MAX_SESSIONS_LIMIT:
        raise Invalid(f"max sessions must be between 1 and {MAX_SESSIONS_LIMIT}, not {value}")
    return value


def _check_template_options(order: HireOrder) -> None:
    if order.template:
        if order.human:
            raise Invalid("a template cannot be a human agent: clones of a person make no sense")
        threshold = order.surge_threshold
        if threshold is not None and not 1 <= threshold <= MAX_SURGE_THRESHOLD:
            raise Invalid(
                f"surge threshold must be between 1 and {MAX_SURGE_THRESHOLD}, not {threshold}"
            )
        return
    if order.surge_threshold is not None or order.clone_lifetime is not None:
        raise Invalid("--surge-threshold and --clone-lifetime only apply to a --template agent")


async def hire(
    tx: Tx,
    clock: Clock,
    order: HireOrder,
    by: Person,
    default_brain: str,
    brain_checked: bool = False,
) -> Agent:
    """Write the new agent as ``hired``; it becomes active once its node has made its workspace.
    ``brain_checked``: its node (another machine) has checked the brain; else it is checked
    here."""
    check_name("agent", order.name)
    check_engram(order.engram)
    check_max_sessions(order.max_sessions)
    _check_template_options(order)
    node = await node_by_name(tx, order.node)
    human_id = None
    if order.human is not None:
        if order.brain is not None:
            raise Invalid("a human agent has no brain: give --human or --brain, not both")
        human_id = (await person_by_name(tx, order.human)).id
        brain = HUMAN_BRAIN
    else:
        spec = parse_brain_spec(order.brain or default_brain)
        brain = str(spec if brain_checked else await check_brain(spec))
    if await tx.agents.by_name(order.name) is not None:
        raise Conflict(f"an agent named {order.name!r} already exists (names are never reused)")
    agent_id = await tx.agents.insert(
        name=order.name,
        node_id=node.id,
        lifecycle=Lifecycle.HIRED.value,
        modality=(Modality.HUMAN if human_id else Modality.AI).value,
        human_person_id=human_id,
        engram=order.engram,
        brain=brain,
        max_sessions=order.max_sessions,
        is_template=order.template,
        surge_threshold=order.surge_threshold,
        clone_lifetime_seconds=_seconds(order.clone_lifetime),
        tools=stored(DEFAULT_TOOLS if order.tools is None else check_tools(order.tools)),
        mcp_servers=check_servers(order.mcp_servers),
        ask=stored(_ask(order)),
        hired_by_person_id=by.id,
        created_at=clock.now(),
    )
    agent = await tx.agents.by_id(agent_id)
    assert agent is not None
    if order.env.is_empty:
        return agent
    await change_env(tx, agent, order.env)
    declared = await tx.agents.by_id(agent_id)
    assert declared is not None
    return declared


async def reassign(tx: Tx, agent_name: str, node_name: str) -> Agent:
    """Move an agent with no turn running to another node; its new workspace is made there
    next, and its queued text waits for it (a node lost with the agent's turns leaves them
    queued: reassigning is how they run elsewhere)."""
    agent = await agent_by_name(tx, agent_name)
    refuse_node_session(agent, "reassigned")
    node = await node_by_name(tx, node_name)
    if node.id == agent.node_id:
        raise Conflict(f"agent {agent.name} is already on node {node.name}")
    movable = (Lifecycle.HIRED, Lifecycle.ACTIVE)
    if agent.lifecycle not in movable:
        raise Conflict(
            f"agent {agent.name} is {agent.lifecycle.value}; only a hired or active agent can be"
            " reassigned",
            state=agent.lifecycle.value,
        )
    if not await tx.agents.move_if_idle(agent.id, node.id, movable):
        running = await tx.runs.count_running(agent.id)
        raise Conflict(
            f"agent {agent.name} is not idle ({running} turn(s) running); reassign it when it is"
            " idle",
            state=agent.lifecycle.value,
        )
    moved = await tx.agents.by_id(agent.id)
    assert moved is not None
    return moved


def _seconds(duration: timedelta | None) -> int | None:
    return None if duration is None else int(duration.total_seconds())


def _ask(order: HireOrder) -> tuple[str, ...]:
    servers = [server.name for server in order.mcp_servers]
    return DEFAULT_ASK if order.ask is None else check_ask(order.ask, servers)
