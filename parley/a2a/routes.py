"""Where A2A is served: per exposed agent, its card (public, as A2A wants), JSON-RPC at
``/a2a/<agent>`` and HTTP+JSON under ``/a2a/<agent>/rest``, both a2a-sdk's transports over
``ParleyHandler``. The client's token and the agent's exposure are checked before any of it
(``parley/api/guards.py``, ``gate``), so a transport only ever sees a known client and an
exposed agent."""

from __future__ import annotations

import json
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_rest_routes
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types.a2a_pb2 import TaskState
from a2a.utils.constants import JSONRPC_PARSE_ERROR_CODE
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from parley.a2a.card import card_of
from parley.a2a.edge import CARD_PATH, INVALID_PARAMS, PREFIX, REST, not_exposed, rpc_error
from parley.a2a.handler import ParleyHandler
from parley.context import Context

AGENT = PREFIX + "/{agent}"
_STATE_NAMES = frozenset(TaskState.keys())
_STATE_NUMBERS = frozenset(TaskState.values())


def a2a_routes() -> list[BaseRoute]:
    handler, builder = ParleyHandler(), _Builder()
    dispatcher = JsonRpcDispatcher(request_handler=handler, context_builder=builder)

    async def json_rpc(request: Request) -> Response:
        refused = await _refused_body(request)
        return refused or await dispatcher.handle_requests(request)

    return [
        Route(AGENT + CARD_PATH, _card, methods=["GET"]),
        Route(AGENT, json_rpc, methods=["POST"]),
        Mount(AGENT + REST, app=_RestChecks(Router(create_rest_routes(handler, builder)))),
    ]


class _RestChecks:
    """On HTTP+JSON, what the SDK's parser would let through as nothing: a list's unknown task
    state (read as no state, so the list would hold every task) is refused. And the HTTP
    status of an error as A2A 1.0 gives it (§5.4), where a2a-sdk 1.3 answers 400 or 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/tasks"):
            states = QueryParams(scope.get("query_string", b"")).getlist("status")
            wrong = [state for state in states if not _is_task_state(_number_or_name(state))]
            if wrong:
                said = f"status {wrong[0][:40]!r} is not a task state"
                # As the SDK words an error on this binding: a google.rpc.Status.
                refused = {"code": 400, "status": "INVALID_ARGUMENT", "message": said}
                await JSONResponse({"error": refused}, 400)(scope, receive, send)
                return
        await self.app(scope, receive, _SpecStatus(send))


# The errors whose HTTP status A2A 1.0 sets apart from a2a-sdk's, by their ErrorInfo reason.
SPEC_STATUS = {
    "TASK_NOT_CANCELABLE": 409,
    "CONTENT_TYPE_NOT_SUPPORTED": 415,
    "INVALID_AGENT_RESPONSE": 502,
}


class _SpecStatus:
    """Holds back an error's start until its body says which error it is, then sends both with
    the spec's status (in the header and in the body's ``code``); anything else goes as is."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._start: dict[str, Any] | None = None

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] in (400, 500):
            self._start = dict(message)
            return
        if self._start is None or message["type"] != "http.response.body":
            await self._send(message)
            return
        start, self._start = self._start, None
        body = message.get("body", b"")
        status = _spec_status(body)
        if status is not None:
            payload = json.loads(body)
            payload["error"]["code"] = status
            body = json.dumps(payload).encode()
            start["status"] = status
            start["headers"] = [
                (name, str(len(body)).encode() if name.lower() == b"content-length" else value)
                for name, value in start["headers"]
            ]
        await self._send(start)
        await self._send({**message, "body": body})


def _spec_status(body: bytes) -> int | None:
    try:
        details = json.loads(body)["error"].get("details", [])
        reasons = [detail.get("reason") for detail in details if isinstance(detail, dict)]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return next((SPEC_STATUS[r] for r in reasons if r in SPEC_STATUS), None)


def _number_or_name(state: str) -> object:
    return int(state) if state.isdigit() else state


async def _refused_body(request: Request) -> Response | None:
    """A body nested too deep for Python's parser answers as what it is, a parse error (the
    SDK would call it an internal one); a body that parses is kept for the SDK to read. A task
    state the protocol does not have, which the SDK's parser would read as no state at all
    (a list filtered by it would list everything), is refused."""
    try:
        body = request._json = json.loads(await request.body())  # Request.json()'s cache
    except RecursionError:
        return rpc_error(JSONRPC_PARSE_ERROR_CODE, "the body nests JSON deeper than Parley reads")
    except ValueError:
        return None  # the SDK answers a body that is not JSON with its own parse error
    params = body.get("params") if isinstance(body, dict) else None
    state = params.get("status") if isinstance(params, dict) else None
    if state is not None and not _is_task_state(state):
        said = f"status {str(state)[:40]!r} is not a task state ({', '.join(sorted(_STATE_NAMES))})"
        return rpc_error(INVALID_PARAMS, said, request_id=body.get("id"))
    return None


def _is_task_state(state: object) -> bool:
    if isinstance(state, str):
        return state in _STATE_NAMES
    return isinstance(state, int) and not isinstance(state, bool) and state in _STATE_NUMBERS


async def _card(request: Request) -> Response:
    context: Context = request.app.state.context
    name = request.path_params["agent"]
    async with context.store.single_read() as tx:
        agent = await tx.a2a.exposed_by_name(name)
    if agent is None:
        raise not_exposed(name)
    return JSONResponse(agent_card_to_dict(card_of(agent, context.settings.base_url)))


class _Builder(DefaultServerCallContextBuilder):
    def build(self, request: Request) -> ServerCallContext:
        call = super().build(request)
        call.state["parley"] = request.app.state.context
        call.state["a2a_client"] = request.state.a2a_client
        call.state["a2a_agent"] = request.state.a2a_agent
        return call
