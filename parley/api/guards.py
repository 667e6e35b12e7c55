"""What every API request passes before its body is read: who is calling (a person's token, or
a running turn's token on /act/), then a cap on the body's size. Both are plain ASGI
middleware, so that an unauthorised or oversized request is answered without reading its body
whole (FastAPI reads a body before it runs a route's dependencies)."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from parley.api.errors import error_response
from parley.context import Context
from parley.errors import ParleyError, TooLarge, Unauthorized, Unavailable
from parley.people.accounts import authenticate
from parley.runs.tokens import running_run

API = "/api/v1/"
ACTIONS = "/api/v1/act/"


class Authenticate:
    """A person's token on the API, a running turn's token on /act/: checked before anything
    else; the person found is kept on the request for the route's dependency."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(API):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        try:
            await _authenticate(request)
        except ParleyError as error:
            await error_response(error)(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def _authenticate(request: Request) -> None:
    context = getattr(request.app.state, "context", None)
    if not isinstance(context, Context):
        raise Unavailable("Parley is still starting")
    token = bearer_token(request)
    if request.url.path.startswith(ACTIONS):
        async with context.store.transaction() as tx:
            await running_run(tx, token)
        return
    request.state.person = await authenticate(context.store, token)


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if header and scheme.lower() != "bearer":
        raise Unauthorized("the Authorization header must be 'Bearer <token>'")
    return token.strip() or None


class BodyLimit:
    """Requests whose body is larger than ``limit`` bytes are answered 413: at once when they
    say so (Content-Length), or as soon as what arrives passes the limit."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await error_response(self._too_large())(scope, receive, send)
            return
        await self.app(scope, self._counting(receive), send)

    def _counting(self, receive: Receive) -> Receive:
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    # FastAPI passes an HTTPException raised while reading a body through.
                    raise HTTPException(413, self._too_large().message)
            return message

        return counted

    def _too_large(self) -> TooLarge:
        return TooLarge(f"the request body is larger than {self.limit} bytes")


def _content_length(scope: Scope) -> int | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for name, value in headers:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server itself refuses a malformed length
    return None


def install_guards(app: Any, body_limit: int) -> None:
    """Outermost first: who is calling, then how large the body is."""
    app.add_middleware(BodyLimit, limit=body_limit)
    app.add_middleware(Authenticate)
