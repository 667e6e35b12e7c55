"""/mcp's protocol side: the ``mcp`` library's server, its tools the running turn's own actions
(the same table, checks and authority as ``/api/v1/act/…``), under a session manager that is
stateless and answers in JSON. Loaded by ``mcp_endpoint.py`` at the first call to ``/mcp``: a
server whose brains never call it does not load the library (most of a second of every
start)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request

from parley.actions.table import ACTIONS, AGENT_TOOLS, NODE_SESSION_TOOLS
from parley.api.guards import bearer_token
from parley.context import Context
from parley.errors import ParleyError, Unauthorized
from parley.hub.local_actions import LocalActions

MAX_BODY = 1024 * 1024  # a text is at most 100 000 characters; a request carries one action


def session_manager(
    context_of: Callable[[], Context], running_run: Callable[[str | None], Awaitable[Any]]
) -> StreamableHTTPSessionManager:
    """The protocol's server for the running app's context (``context_of``); ``running_run``
    reads the run a token is for, as the endpoint checked it on arrival."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        run = await running_run(_token_of(ctx))
        names = NODE_SESSION_TOOLS if run.by_node_session else AGENT_TOOLS
        return types.ListToolsResult(tools=[_tool(name) for name in names])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        context = context_of()
        token = _token_of(ctx) or ""
        actions = LocalActions(context.store, context.clock, token, context.runtime.budget)
        try:
            acted = await actions.acted(params.name, params.arguments or {})
        except ParleyError as refused:
            return _text(refused.message, error=True)
        return _text(acted.result)

    server: Server[Any] = Server("parley", on_list_tools=list_tools, on_call_tool=call_tool)
    return StreamableHTTPSessionManager(
        app=server, stateless=True, json_response=True, max_request_body_size=MAX_BODY
    )


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
