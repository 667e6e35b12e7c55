"""/mcp: Parley as an MCP server (streamable HTTP) for command brains. Its tools are the running
turn's own actions, as ``/api/v1/act/…`` offers them: the same table, the same checks, the same
authority, the run's token as a bearer and nothing else. A node session gets its narrower list.

Stateless, with JSON answers: each request stands alone, as a run's token does; the ``mcp``
library's session manager speaks the protocol (``mcp_tools.py``, loaded at the first call). A
request without a running turn's token is refused before the protocol is read (401, in the
API's error shape)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from parley.api.errors import error_response
from parley.api.guards import bearer_token
from parley.context import Context
from parley.errors import ParleyError, Unavailable
from parley.hub.actions import running_run

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

PATH = "/mcp"


class McpEndpoint:
    """The ASGI app of ``/mcp``, for the context of the running app."""

    def __init__(self, context_of: Any) -> None:
        self._context_of = context_of  # the app's state: its context exists once it started
        self._manager: StreamableHTTPSessionManager | None = None
        self._starting = asyncio.Lock()
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None
        self._open = False

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While the app runs: the session manager, once started by the first call, is stopped
        when it stops."""
        self._open, self._stop = True, asyncio.Event()
        try:
            yield
        finally:
            self._open = False
            self._stop.set()
            if self._owner is not None:
                await self._owner
            self._owner = self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._running_run(bearer_token(Request(scope)))
            manager = await self._started()
        except ParleyError as refused:
            await error_response(refused)(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)

    async def _started(self) -> StreamableHTTPSessionManager:
        """The session manager, started at the first call in a task of its own: its anyio task
        group is entered and left in one task, whichever tasks start and stop the app."""
        async with self._starting:
            if self._manager is not None:
                return self._manager
            if not self._open:
                raise Unavailable("Parley is stopping")
            from parley.api.mcp_tools import session_manager

            manager = session_manager(self._context, self._running_run)
            started = asyncio.Event()
            stop = self._stop

            async def run() -> None:
                async with manager.run():
                    started.set()
                    await stop.wait()

            owner = asyncio.create_task(run())
            waiting = asyncio.create_task(started.wait())
            await asyncio.wait([owner, waiting], return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            if owner.done():
                owner.result()  # it failed to start: say why
            self._owner, self._manager = owner, manager
            return manager

    def _context(self) -> Context:
        context: Context = self._context_of.context
        return context

    async def _running_run(self, token: str | None) -> Any:
        async with self._context().store.transaction() as tx:
            return await running_run(tx, token)
