"""Changing a hired agent's settings (``agent set``): each part of a change is optional.

What changes is read at the start of each turn, so a change applies from the agent's next turn
and never to one already running. A lower ``max_sessions`` stops nothing: running turns finish,
and no new one starts while the agent runs that many or more. Each setting that changed is
recorded with who changed it and when (variables by name only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from parley.agents.hiring import check_max_sessions
from parley.agents.lookup import agent_by_name
from parley.agents.mcp import check_node_session_servers, merged
from parley.agents.model import Agent, Lifecycle, McpServer, Modality
from parley.agents.tools import check_ask, check_node_session_tools, check_tools, stored
from parley.agents.variables import EnvChange, change_env
from parley.brains.spec import check_brain, parse_brain_spec
from parley.clock import Clock
from parley.errors import Conflict, Invalid
from parley.mesh.nodes import check_engram
from parley.people.model import Person
from parley.store import Tx


@dataclass(frozen=True)
class AgentChange:
    env: EnvChange = field(default_factory=EnvChange)
    engram: str | None = None
    brain: str | None = None
    max_sessions: int | None = None
    tools: tuple[str, ...] | None = None
    # Its tools that ask first, the whole list.
    ask: tuple[str, ...] | None = None
    # MCP servers added or replaced by name, and names removed.
    mcp_servers: tuple[McpServer, ...] = ()
    unset_mcp: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        settings = (self.engram, self.brain, self.max_sessions, self.tools, self.ask)
        servers = self.mcp_servers or self.unset_mcp
        return self.env.is_empty and not servers and all(value is None for value in settings)


async def change_agent(
    tx: Tx,
    clock: Clock,
    name: str,
    change: AgentChange,
    by: Person,
    brain_checked: bool = False,
    node_sessions_may_run: bool = False,
) -> Agent:
    """``brain_checked``: the agent's node (another machine) has checked a new brain;
    ``node_sessions_may_run``: the operator grants node sessions the ``run`` tool."""
    agent = await agent_by_name(tx, name)
    if change.is_empty:
        raise Invalid(f"nothing to change for agent {agent.name}")
    if agent.lifecycle is Lifecycle.RETIRED:
        raise Conflict(
            f"agent {agent.name} is retired: it runs no more", state=agent.lifecycle.value
        )
    _refuse_what_does_not_apply(agent, change)
    settings = await _checked_settings(agent, change, brain_checked)
    if agent.is_node_session and "tools" in settings:
        check_node_session_tools(agent.node_name, change.tools or (), node_sessions_may_run)
    if agent.is_node_session and "mcp_servers" in settings:
        servers = settings["mcp_servers"]
        check_node_session_servers(agent.node_name, servers, node_sessions_may_run)
    await change_env(tx, agent, change.env)
    if settings:
        await tx.agents.set_settings(agent.id, **settings)
    changed = await tx.agents.by_id(agent.id)
    assert changed is not None
    differences = _differences(agent, changed, change)
    await tx.agent_changes.record(agent.id, differences, by.id, clock.now())
    return changed


def _refuse_what_does_not_apply(agent: Agent, change: AgentChange) -> None:
    if agent.is_node_session:
        if change.engram is not None:
            raise Invalid(
                f"{agent.name} speaks for node {agent.node_name}: its engram is the node's;"
                f" set it with: parley node engram {agent.node_name} TEXT",
                field="engram",
            )
        if change.max_sessions is not None:
            raise Invalid(
                f"{agent.name} is a node session: it runs one turn at a time",
                field="max_sessions",
            )
    if change.brain is not None and agent.modality is Modality.HUMAN:
        raise Invalid(
            f"agent {agent.name} is a human agent: a person answers for it, it has no brain",
            field="brain",
        )


async def _checked_settings(
    agent: Agent, change: AgentChange, brain_checked: bool
) -> dict[str, Any]:
    """The settings to write, each checked as at hire; those equal to the current are left out."""
    settings: dict[str, Any] = {}
    if change.engram is not None and change.engram != agent.engram:
        settings["engram"] = check_engram(change.engram)
    if change.brain is not None:
        spec = parse_brain_spec(change.brain)
        brain = str(spec if brain_checked else await check_brain(spec))
        if brain != agent.brain:
            settings["brain"] = brain
    if change.max_sessions is not None and change.max_sessions != agent.max_sessions:
        settings["max_sessions"] = check_max_sessions(change.max_sessions)
    if change.tools is not None and check_tools(change.tools) != agent.tools:
        settings["tools"] = stored(check_tools(change.tools))
    if change.mcp_servers or change.unset_mcp:
        servers = merged(agent.mcp_servers, change.mcp_servers, change.unset_mcp)
        if servers != agent.mcp_servers:
            settings["mcp_servers"] = servers
    if change.ask is not None:
        servers = settings.get("mcp_servers", agent.mcp_servers)
        ask = check_ask(change.ask, [server.name for server in servers])
        if ask != agent.ask:
            settings["ask"] = stored(ask)
    return settings


def _differences(
    before: Agent, after: Agent, change: AgentChange
) -> list[tuple[str, str | None, str | None]]:
    """(setting, old, new) for each setting the change touched; variables by name only."""
    found: list[tuple[str, str | None, str | None]] = [
        (setting, str(old), str(new))
        for setting, old, new in (
            ("engram", before.engram, after.engram),
            ("brain", before.brain, after.brain),
            ("max_sessions", before.max_sessions, after.max_sessions),
            ("tools", _listed(before.tools), _listed(after.tools)),
            ("mcp_servers", _servers(before), _servers(after)),
            ("ask", _listed(before.ask), _listed(after.ask)),
        )
        if old != new
    ]
    if not change.env.is_empty:
        found.append(("env", _variables(before), _variables(after)))
    return found


def _servers(agent: Agent) -> str:
    return ", ".join(f"{s.name}={s.target}" for s in agent.mcp_servers) or "(none)"


def _listed(tools: tuple[str, ...]) -> str:
    return ",".join(tools) or "(none)"


def _variables(agent: Agent) -> str:
    named = list(agent.env) + [f"{name} (from server)" for name in agent.env_from_server]
    return ", ".join(named) if named else "(none)"
