"""This node's MCP clients: the servers of each agent session, started at the first turn that
needs them and kept for that session's next turns.

A session (a key the caller gives, one per agent session) holds one client per server name.
``tools()`` starts what is missing (concurrently), restarts a server whose spec changed or
that broke (died, or did not answer a call in time), stops those no longer asked for, and lists
their tools; ``call()`` sends one tool call and reads its result as text for a model. A session
idle for ``idle_seconds`` is closed by ``sweep()``, as it is by ``close_session()`` and by
``close()`` when the node stops. How one server is started and stopped is in ``mcp_client.py``;
specs and results in ``mcp_spec.py``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from parley.brains.confinement import ProcessPolicy
from parley.brains.tail import Tail
from parley.errors import Invalid, Unavailable
from parley.redact import redact
from parley.tools.mcp_spec import McpServerSpec, McpTool, header_values

if TYPE_CHECKING:
    import mcp_types as types

    from parley.tools.mcp_client import McpClient

__all__ = ["McpServerSpec", "McpServers", "McpTool"]

MAX_PAGES = 20  # of a server's tool list: a server paging without end is cut there
STDERR_KEPT = 16 * 1024


class _Running:
    """A started server of a session, with what it was started with."""

    def __init__(
        self,
        spec: McpServerSpec,
        client: McpClient,
        headers: dict[str, str],
        env: Mapping[str, str],
        used: float,
    ) -> None:
        self.spec = spec
        self.client = client
        # The node's secrets (header values) are shown to no one, not even the model; an error
        # (logged, kept on the run) shows none of the agent's variables either.
        self.header_values = list(headers.values())
        self.secrets = [*self.header_values, *env.values()]
        self.used = used  # when last used, on the servers' clock
        self.busy = 0


class McpServers:
    """This node's started MCP clients, each kept for one session and one spec."""

    def __init__(
        self,
        *,
        policy: ProcessPolicy,
        server_environment: Mapping[str, str] | None = None,
        start_seconds: float = 15.0,
        call_seconds: float = 120.0,
        idle_seconds: float = 600.0,
        max_result_bytes: int = 64 * 1024,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._policy = policy
        self._environment = server_environment if server_environment is not None else os.environ
        self._start_seconds = start_seconds
        self._call_seconds = call_seconds
        self._idle_seconds = idle_seconds
        self._monotonic = monotonic  # when each server was last used: a test's own clock
        self._max_result_bytes = max_result_bytes
        self._sessions: dict[str, dict[str, _Running]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False

    async def tools(
        self,
        session: str,
        specs: Sequence[McpServerSpec],
        workspace: Path,
        env: Mapping[str, str],
    ) -> list[McpTool]:
        """The tools of ``specs``' servers for ``session``, starting those not running."""
        names = [spec.name for spec in specs]
        if len(set(names)) != len(names):
            raise Invalid("two MCP servers of one agent have the same name")
        headers = {spec.name: header_values(spec, self._environment) for spec in specs}
        async with self._lock(session):
            if self._closed:
                raise Unavailable("this node is stopping: its MCP servers are closed")
            running = self._sessions.setdefault(session, {})
            await self._stop_stale(running, specs)
            for spec in specs:
                if spec.name not in running:
                    running[spec.name] = self._start(spec, workspace, env, headers[spec.name])
            listed = await asyncio.gather(
                *(
                    self._listed(running, spec, workspace, env, headers[spec.name])
                    for spec in specs
                ),
                return_exceptions=True,
            )
        return _flattened(listed)

    async def call(self, session: str, server: str, tool: str, arguments: Mapping[str, Any]) -> str:
        """The result of ``tool`` on ``server`` as text for a model; Invalid if the tool refused
        (or the server is not started for ``session``), Unavailable if the server did not
        answer in time or died (it is started again at the next ``tools()``)."""
        running = self._sessions.get(session, {}).get(server)
        if running is None or not running.client.started:
            raise Invalid(f"MCP server {server} is not started for this session")
        if running.client.broken:
            raise Unavailable(f"MCP server {server} has stopped; it starts again next turn")
        running.busy += 1
        try:
            result = await self._called(running, tool, dict(arguments))
        finally:
            running.busy -= 1
            running.used = self._monotonic()
        from parley.tools.mcp_results import result_text

        text = redact(result_text(result, self._max_result_bytes), running.header_values)
        if result.is_error:
            raise Invalid(redact(f"{server}.{tool}: {text}", running.secrets))
        return text

    async def close_session(self, session: str) -> None:
        async with self._lock(session):
            running = self._sessions.pop(session, {})
            await _stop_all(running.values())
        self._locks.pop(session, None)

    async def sweep(self) -> None:
        """Close each server idle for ``idle_seconds`` (not one being started or called)."""
        now = self._monotonic()
        for session, running in list(self._sessions.items()):
            lock = self._lock(session)
            if lock.locked():
                continue  # being started: in use
            async with lock:
                idle = [
                    name
                    for name, server in running.items()
                    if not server.busy and now - server.used >= self._idle_seconds
                ]
                await _stop_all([running.pop(name) for name in idle])
                if not running and self._sessions.get(session) is running:
                    # Under the lock: a turn starting meanwhile makes a new entry, kept.
                    del self._sessions[session]

    async def keep_swept(self) -> None:
        """Sweep until cancelled, so that a quiet node's servers close too (at most half the
        idle time late)."""
        while True:
            await asyncio.sleep(self._idle_seconds / 2)
            await self.sweep()

    async def close(self) -> None:
        """Close every server of every session; idempotent."""
        self._closed = True
        for session in list(self._sessions):
            await self.close_session(session)

    # --- starting -------------------------------------------------------------------------------

    def _lock(self, session: str) -> asyncio.Lock:
        return self._locks.setdefault(session, asyncio.Lock())

    async def _stop_stale(
        self, running: dict[str, _Running], specs: Sequence[McpServerSpec]
    ) -> None:
        """Stop the servers no longer asked for, changed, or broken."""
        wanted = {spec.name: spec for spec in specs}
        stale = [
            name
            for name, server in running.items()
            if wanted.get(name) != server.spec or server.client.broken
        ]
        await _stop_all([running.pop(name) for name in stale])

    def _start(
        self, spec: McpServerSpec, workspace: Path, env: Mapping[str, str], headers: dict[str, str]
    ) -> _Running:
        stderr, clients = None, _clients()
        if spec.url is not None:
            connect = clients.http_connect(
                spec.url, headers, self._start_seconds, self._call_seconds
            )
        else:
            stderr = Tail("stderr", STDERR_KEPT)
            connect = clients.stdio_connect(
                spec.argv,
                policy=self._policy,
                server_environment=self._environment,
                workspace=workspace,
                env=env,
                stderr=stderr,
            )
        client = clients.McpClient(
            spec.name, connect, start_seconds=self._start_seconds, stderr=stderr
        )
        return _Running(spec, client, headers, env, used=self._monotonic())

    async def _listed(
        self,
        running: dict[str, _Running],
        spec: McpServerSpec,
        workspace: Path,
        env: Mapping[str, str],
        headers: dict[str, str],
    ) -> list[McpTool]:
        """``spec``'s tools; a server that was running but does not answer anymore (it died
        since the last turn) is started again, once."""
        server = running[spec.name]
        was_started = server.client.started
        try:
            return await self._tools_of(server)
        except Unavailable:
            if not was_started:
                raise
        await server.client.stop()
        running[spec.name] = self._start(spec, workspace, env, headers)
        return await self._tools_of(running[spec.name])

    async def _tools_of(self, server: _Running) -> list[McpTool]:
        session = await server.client.session()
        server.used = self._monotonic()
        import mcp_types

        listed: list[types.Tool] = []
        cursor = None
        try:
            async with asyncio.timeout(self._start_seconds):
                for _ in range(MAX_PAGES):
                    page = await session.list_tools(
                        params=mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
                    )
                    listed += page.tools
                    if not (cursor := page.next_cursor):
                        break
        except (TimeoutError, _clients().MCPError, ValidationError) as error:
            server.client.broken = True
            raise server.client.failure(_why(error, self._start_seconds), server.secrets) from None
        return [_tool(server.spec.name, tool) for tool in listed]

    # --- calling --------------------------------------------------------------------------------

    async def _called(
        self, server: _Running, tool: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        session = await server.client.session()
        name = server.spec.name
        try:
            # The library's timeout answers first (and tells the server the call is abandoned);
            # this one only makes sure a call never hangs.
            async with asyncio.timeout(self._call_seconds + 5):
                return await session.call_tool(
                    tool, arguments, read_timeout_seconds=self._call_seconds
                )
        except (TimeoutError, _clients().MCPError) as error:
            if isinstance(error, _clients().MCPError) and error.code not in _gone():
                # The server answered with an error: the model's call was refused.
                raise Invalid(redact(f"{name}.{tool}: {error.message}", server.secrets)) from None
            server.client.broken = True
            why = _why(error, self._call_seconds)
            raise server.client.failure(f"{why} (calling {tool})", server.secrets) from None
        except (RuntimeError, ValidationError) as error:
            raise Unavailable(
                redact(f"MCP server {name} gave {tool} a malformed result: {error}", server.secrets)
            ) from None


def _gone() -> tuple[int, ...]:
    """The errors of a server gone (it timed out, or closed), not of a call refused."""
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    return (REQUEST_TIMEOUT, CONNECTION_CLOSED)


def _clients() -> ModuleType:
    """``mcp_client.py``, which brings the MCP library: half a second of imports, made at the
    first server a node starts rather than by every node and every ``parley serve``."""
    from parley.tools import mcp_client

    return mcp_client


def _why(error: Exception, seconds: float) -> str:
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    mcp_error = _clients().MCPError
    if isinstance(error, TimeoutError) or (
        isinstance(error, mcp_error) and error.code == REQUEST_TIMEOUT
    ):
        return f"did not answer within {seconds:g} s"
    if isinstance(error, mcp_error) and error.code == CONNECTION_CLOSED:
        return "has stopped"
    return f"answered wrongly: {error}"


def _tool(server: str, tool: types.Tool) -> McpTool:
    return McpTool(
        server=server,
        name=tool.name,
        description=tool.description or tool.title or "",
        input_schema=dict(tool.input_schema),
    )


def _flattened(listed: list[list[McpTool] | BaseException]) -> list[McpTool]:
    """All the tools, or the first failure (each server was tried meanwhile)."""
    for result in listed:
        if isinstance(result, BaseException):
            raise result
    return [tool for tools in listed if not isinstance(tools, BaseException) for tool in tools]


async def _stop_all(servers: Iterable[_Running]) -> None:
    await asyncio.gather(*(server.client.stop() for server in servers))
