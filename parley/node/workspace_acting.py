"""The Actions of a turn on its node: a workspace tool on the agent's list acts here, in the
agent's workspace on this machine, and a tool of one of its MCP servers (``server.tool``) is
called here too; Parley's own actions go on to the hub (over HTTP from a joined node, in process
from the hub's own). The hub never touches another machine's files."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from parley.actions.arguments import action_named, bind
from parley.actions.table import MAX_CONTENT
from parley.approvals.model import asks_first
from parley.brains.brain import Actions
from parley.brains.confinement import node_policy
from parley.brains.environment import from_server
from parley.errors import Forbidden, Invalid, Unavailable
from parley.node.messages import TurnStart
from parley.settings import Settings
from parley.tools.mcp_servers import McpServers
from parley.tools.workspace import WorkspaceTools

# The workspace tools of a turn, from its start (its workspace, its agent's variables).
ToolsFor = Callable[[TurnStart, Path], WorkspaceTools]


class McpCalls(Protocol):
    async def call(
        self, session: str, server: str, tool: str, arguments: Mapping[str, Any]
    ) -> str: ...


class Approvals(Protocol):
    async def approve(self, tool: str, arguments: Mapping[str, object]) -> str | None:
        """Wait for a person's decision on this call: None, it may act; else the words the
        model reads instead (who denied it and why, or that nobody answered in time)."""


class WorkspaceActing:
    def __init__(
        self,
        start: TurnStart,
        hub: Actions,
        tools_for: ToolsFor,
        mcp: McpCalls,
        approvals: Approvals,
    ) -> None:
        self._start, self._hub, self._tools_for, self._mcp = start, hub, tools_for, mcp
        self._approvals = approvals

    async def act(self, name: str, arguments: Mapping[str, object]) -> str:
        server, dot, tool = name.partition(".")
        if dot:
            return await self._call_server(server, tool, arguments)
        if not action_named(name).in_workspace:
            return await self._hub.act(name, arguments)
        if name not in self._start.tools:
            listed = [tool for tool in self._start.tools if action_named(tool).in_workspace]
            raise Forbidden(
                f"{self._start.agent} may not {name}: its tools are"
                f" {', '.join(listed) or 'none'} (an owner sets them: parley agent set --tools)"
            )
        checked = bind(name, arguments)
        tools = self._tools_for(self._start, self._workspace())
        await self._asked_first(name, checked)
        return str(await getattr(tools, name)(**checked))

    async def _call_server(self, server: str, tool: str, arguments: Mapping[str, object]) -> str:
        if server not in {given.name for given in self._start.mcp_servers}:
            raise Forbidden(f"{self._start.agent} has no MCP server {server!r}")
        if len(json.dumps(arguments, default=str)) > MAX_CONTENT:
            raise Invalid(f"the arguments of {server}.{tool} are past {MAX_CONTENT} characters")
        await self._asked_first(f"{server}.{tool}", arguments)
        return await self._mcp.call(mcp_session(self._start), server, tool, arguments)

    async def _asked_first(self, tool: str, arguments: Mapping[str, object]) -> None:
        """A tool on the agent's ask list acts only once a person approves this call."""
        if asks_first(self._start.ask, tool):
            denied = await self._approvals.approve(tool, arguments)
            if denied is not None:
                raise Forbidden(denied)

    def _workspace(self) -> Path:
        if self._start.workspace is None:
            raise Invalid(f"agent {self._start.agent} has no workspace on this node yet")
        workspace = Path(self._start.workspace)
        if not workspace.is_dir():
            raise Unavailable(f"the workspace {str(workspace)!r} of {self._start.agent} is missing")
        return workspace


def mcp_session(start: TurnStart) -> str:
    """Which of the node's MCP clients a turn uses: its agent's, for its session."""
    return f"{start.agent}/{start.session_id}"


def agent_variables(start: TurnStart, server_environment: Mapping[str, str]) -> dict[str, str]:
    """The variables its owner declared for the turn's agent: values given, and those this
    node's environment gives by name (Invalid, naming it, if one is not set here)."""
    given = from_server(start.env_from_server, server_environment, start.agent)
    return {**start.env, **given}


def tools_on_this_node(settings: Settings) -> tuple[ToolsFor, McpServers]:
    """Workspace tools and MCP servers as this node's settings confine them: ``run`` and a
    stdio server start their processes as command brains are started (the same launcher,
    policy and variables)."""
    policy = node_policy(settings)

    def tools_for(start: TurnStart, workspace: Path) -> WorkspaceTools:
        return WorkspaceTools(
            workspace,
            policy=policy,
            env=agent_variables(start, policy.server_environment),
            grace_seconds=settings.stop_grace_seconds,
        )

    return tools_for, McpServers(policy=policy, server_environment=policy.server_environment)
