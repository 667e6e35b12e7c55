"""An A2A agent added as a connection (owners): its card read once, kept; its skills our roles
for it (``ROLE@NAME``), addressed as a peer installation's roles are. Pause and revoke are a
connection's; what waits for it is bounded by its queue limit."""

from __future__ import annotations

from urllib.parse import urlsplit

from parley.clock import Clock
from parley.errors import Conflict, Invalid
from parley.federation.a2a_agents import A2AAgents, card_json, roles_of
from parley.federation.connections import status_of
from parley.federation.model import A2A, ConnectionStatus
from parley.naming import check_name
from parley.people.accounts import require_owner
from parley.people.model import Person
from parley.store import Store
from parley.tokens import hash_token, new_peer_token

MAX_TOKEN = 4096


async def add_a2a(
    store: Store,
    clock: Clock,
    agents: A2AAgents,
    by: Person,
    name: str,
    url: str,
    token: str | None,
) -> ConnectionStatus:
    require_owner(by, "add an A2A agent")
    check_name("connection", name)
    url = _checked_url(url)
    if token is not None and (not token.strip() or len(token) > MAX_TOKEN or "\x00" in token):
        raise Invalid(f"token: 1 to {MAX_TOKEN} characters, no NUL", field="token")
    async with store.transaction() as tx:
        _free(await tx.connections.by_name(name), name)
    card = await agents.read_card(url, token)
    if not roles_of(card):
        raise Invalid(f"the A2A agent at {url} has no skill Parley can address", field="url")
    async with store.transaction() as tx:
        _free(await tx.connections.by_name(name), name)
        # Nobody calls us with this one: an A2A agent is only called.
        unused = hash_token(new_peer_token())
        connection = await tx.connections.add(
            name, url, unused, token or "", clock.now(), by.id, kind=A2A, card=card_json(card)
        )
        return await status_of(tx, connection)


def _free(existing: object, name: str) -> None:
    if existing is not None:
        raise Conflict(f"a connection named {name!r} exists already", field="name")


def _checked_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or "\x00" in url:
        raise Invalid(
            f"url: an http(s) URL of the agent (its card's base), not {url!r}", field="url"
        )
    return url.strip().rstrip("/")
