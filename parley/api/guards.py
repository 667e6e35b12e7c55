"""What every API request passes before its body is read: who is calling (a person's token, a
running turn's token on /act/, a peer's on the frames route, an A2A client's on /a2a/), then a
cap on the body's size. Both are plain ASGI middleware, so that an unauthorised or oversized
request is answered without reading its body whole (FastAPI reads a body before it runs a
route's dependencies). An address whose tokens failed too often is refused before its token is
looked at (``failures.py``)."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from parley.a2a.edge import INVALID_REQUEST, gate, is_a2a, is_a2a_rpc, is_card, rpc_error
from parley.api.errors import error_response
from parley.api.failures import FailureLimit, client_address
from parley.context import Context
from parley.errors import ParleyError, TooLarge, Unauthorized, Unavailable
from parley.federation.model import ConnectionState
from parley.federation.receiver import revoked_here
from parley.hub.actions import running_run
from parley.people.accounts import authenticate
from parley.tokens import peer_token_hash

API = "/api/v1/"
ACTIONS = "/api/v1/act/"
FRAMES = "/federation/v1/frames"


class Authenticate:
    """A person's token on the API, a running turn's token on /act/, a peer's on the frames
    route: checked before anything else; the person (or connection) found is kept on the
    request for the route. Each failure counts against the caller's address."""

    def __init__(self, app: ASGIApp, failures: FailureLimit) -> None:
        self.app, self.failures = app, failures

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"] if scope["type"] == "http" else ""
        if not (path.startswith(API) or path == FRAMES or (is_a2a(path) and not is_card(path))):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        address = client_address(scope)
        try:
            self.failures.check(address)
            await _authenticate(request)
        except ParleyError as error:
            if type(error) is Unauthorized:  # not Throttled: a refused try is no new failure
                self.failures.failed(address)
            await error_response(error)(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def _authenticate(request: Request) -> None:
    context = getattr(request.app.state, "context", None)
    if not isinstance(context, Context):
        raise Unavailable("Parley is still starting")
    token = bearer_token(request)
    path = request.scope["path"]  # not request.url: building a whole URL costs a frame's time
    if path == FRAMES:
        request.state.peer = await _peer(context, token)
        return
    if is_a2a(path):
        request.state.a2a_client, request.state.a2a_agent = await gate(context, path, token)
        return
    if path.startswith(ACTIONS):
        async with context.store.transaction() as tx:
            await running_run(tx, token)
        return
    request.state.person = await authenticate(context.store, token)


async def _peer(context: Context, token: str | None) -> object:
    """The connection the token is for (the batch's transaction reads it again, locked)."""
    token_hash = peer_token_hash(token)
    known = context.runtime.known_peers
    connection = known.get(token_hash)
    if connection is None:
        async with context.store.transaction() as tx:
            connection = await tx.connections.by_issued_token_hash(token_hash)
        if connection is None:
            raise Unauthorized("this peer token is not known here")
        if connection.state is not ConnectionState.REVOKED:
            known.remember(token_hash, connection)
    if connection.state is ConnectionState.REVOKED:
        raise revoked_here()
    return connection


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if header and scheme.lower() != "bearer":
        raise Unauthorized("the Authorization header must be 'Bearer <token>'")
    return token.strip() or None


class BodyLimit:
    """Requests whose body is larger than ``limit`` bytes (a batch of frames: ``frames_limit``)
    are answered 413: at once when they say so (Content-Length), or as soon as what arrives
    passes the limit."""

    def __init__(self, app: ASGIApp, limit: int, frames_limit: int) -> None:
        self.app, self.limit, self.frames_limit = app, limit, frames_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.frames_limit if scope["path"] == FRAMES else self.limit
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _too_large_response(scope["path"], limit)(scope, receive, send)
            return
        await self.app(scope, _counting(receive, limit), send)


def _counting(receive: Receive, limit: int) -> Receive:
    received = 0

    async def counted() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                # FastAPI passes an HTTPException raised while reading a body through.
                raise HTTPException(413, _too_large(limit).message)
        return message

    return counted


def _too_large_response(path: str, limit: int) -> Response:
    """Parley's error; on an A2A JSON-RPC endpoint, JSON-RPC's, which its clients read."""
    if is_a2a_rpc(path):
        return rpc_error(INVALID_REQUEST, _too_large(limit).message, status=413)
    return error_response(_too_large(limit))


def _too_large(limit: int) -> TooLarge:
    return TooLarge(f"the request body is larger than {limit} bytes")


def _content_length(scope: Scope) -> int | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for name, value in headers:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server itself refuses a malformed length
    return None


def install_guards(app: Any, body_limit: int, frames_limit: int, failures: FailureLimit) -> None:
    """Outermost first: who is calling, then how large the body is."""
    app.add_middleware(BodyLimit, limit=body_limit, frames_limit=frames_limit)
    app.add_middleware(Authenticate, failures=failures)
