"""The A2A edge as the rest of the server sees it, without a2a-sdk: where A2A is served (an
exposed agent's card, JSON-RPC and HTTP+JSON endpoints under ``/a2a/<agent>``), who may call
(``gate``: a client's token, an exposed agent), and a JSON-RPC error. a2a-sdk's transports
(``routes.py``) are loaded at the first A2A call, or at start when an agent is exposed: the
server of an installation that exposes none never loads them (a second of every start)."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, NoMatchFound, Router
from starlette.types import Receive, Scope, Send

from parley.a2a.model import A2AClient, Exposed
from parley.context import Context
from parley.errors import NotFound, Unauthorized
from parley.tokens import a2a_token_hash

PREFIX = "/a2a"
CARD_PATH = "/.well-known/agent-card.json"
REST = "/rest"
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def agent_url(base_url: str, agent: str) -> str:
    return f"{base_url.rstrip('/')}{PREFIX}/{agent}"


def is_a2a(path: str) -> bool:
    return path.startswith(PREFIX + "/")


def is_a2a_rpc(path: str) -> bool:
    """``/a2a/<agent>``: an agent's JSON-RPC endpoint."""
    return is_a2a(path) and path.count("/") == 2


def is_card(path: str) -> bool:
    return path.endswith(CARD_PATH)


async def gate(context: Context, path: str, token: str | None) -> tuple[A2AClient, Exposed]:
    """The client behind ``token`` and the exposed agent ``path`` names; Unauthorized, or
    NotFound for an agent not exposed (whoever asks)."""
    token_hash = a2a_token_hash(token)
    name = path[len(PREFIX) + 1 :].split("/", 1)[0]
    async with context.store.single_read() as tx:
        client, agent = await tx.a2a.caller(token_hash, name)
    if client is None:
        raise Unauthorized("this A2A client token is not known here (or was removed)")
    if agent is None:
        raise not_exposed(name)
    return client, agent


def not_exposed(name: str) -> NotFound:
    """What a card or a call of an agent not exposed is answered, whoever asks."""
    return NotFound(f"no agent named {name!r} is exposed over A2A here")


def rpc_error(code: int, message: str, status: int = 200, request_id: object = None) -> Response:
    """A JSON-RPC error (to a request whose id could not be read, unless given)."""
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status)


class A2ARoutes(BaseRoute):
    """Every route under ``/a2a/``: a2a-sdk's transports (``routes.py``), loaded by ``load``
    or by the first request that reaches one; what none of them matches is not found."""

    def __init__(self) -> None:
        self._router: Router | None = None

    @property
    def loaded(self) -> bool:
        return self._router is not None

    def load(self) -> Router:
        if self._router is None:
            from parley.a2a.routes import a2a_routes

            self._router = Router(routes=a2a_routes())
        return self._router

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and is_a2a(scope["path"]):
            return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.load()(scope, receive, send)


async def load_if_exposed(context: Context, routes: A2ARoutes) -> None:
    """At start: a2a-sdk loaded now if an agent is exposed, not at its first client's call."""
    async with context.store.transaction() as tx:
        exposed = await tx.a2a.exposed()
    if exposed:
        routes.load()
