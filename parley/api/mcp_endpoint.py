"""/mcp: Parley as an MCP server (streamable HTTP) for command brains. Its tools are the running
turn's own actions, as ``/api/v1/act/…`` offers them: the same table, the same checks, the same
authority, the run's token as a bearer and nothing else. A node session gets its narrower list.

Stateless, with JSON answers: each request stands alone, as a run's token does; the ``mcp``
library's session manager speaks the protocol. A request without a running turn's token is
refused before the protocol is read (401, in the API's error shape)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from parley.actions.table import ACTIONS, AGENT_TOOLS, NODE_SESSION_TOOLS
from parley.api.errors import error_response
from parley.api.guards import bearer_token
from parley.context import Context
from parley.errors import ParleyError, Unauthorized
from parley.hub.actions import running_run
from parley.hub.local_actions import LocalActions

PATH = "/mcp"
MAX_BODY = 1024 * 1024  # a text is at most 100 000 characters; a request carries one action


class McpEndpoint:
    """The ASGI app of ``/mcp``, for the context of the running app."""

    def __init__(self, context_of: Any) -> None:
        self._context_of = context_of  # the app's state: its context exists once it started
        server: Server[Any] = Server(
            "parley", on_list_tools=self._list_tools, on_call_tool=self._call_tool
        )
        self._manager = StreamableHTTPSessionManager(
            app=server, stateless=True, json_response=True, max_request_body_size=MAX_BODY
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager runs in a task of its own: its anyio task group is entered and
        left in one task, whichever tasks start and stop the app."""
        started, stop = asyncio.Event(), asyncio.Event()

        async def run() -> None:
            async with self._manager.run():
                started.set()
                await stop.wait()

        owner = asyncio.create_task(run())
        waiting = asyncio.create_task(started.wait())
        await asyncio.wait([owner, waiting], return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if owner.done():
            owner.result()  # it failed to start: say why
        try:
            yield
        finally:
            stop.set()
            await owner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._running_run(bearer_token(Request(scope)))
        except ParleyError as refused:
            await error_response(refused)(scope, receive, send)
            return
        await self._manager.handle_request(scope, receive, send)

    def _context(self) -> Context:
        context: Context = self._context_of.context
        return context

    async def _running_run(self, token: str | None) -> Any:
        async with self._context().store.transaction() as tx:
            return await running_run(tx, token)

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        run = await self._running_run(_token_of(ctx))
        names = NODE_SESSION_TOOLS if run.by_node_session else AGENT_TOOLS
        return types.ListToolsResult(tools=[_tool(name) for name in names])

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        context = self._context()
        token = _token_of(ctx) or ""
        actions = LocalActions(context.store, context.clock, token, context.runtime.budget)
        try:
            acted = await actions.acted(params.name, params.arguments or {})
        except ParleyError as refused:
            return _text(refused.message, error=True)
        return _text(acted.result)


def _tool(name: str) -> types.Tool:
    action = ACTIONS[name]
    return types.Tool(name=name, description=action.help, input_schema=action.json_schema())


def _text(text: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def _token_of(ctx: Any) -> str | None:
    """The bearer of the HTTP request this protocol request came in (checked on arrival)."""
    request = getattr(ctx, "request", None)
    if not isinstance(request, Request):
        raise Unauthorized("this request came without its run token")
    return bearer_token(request)
