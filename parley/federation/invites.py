"""Invites and the handshake. An owner makes an invite: a code holding this installation's
public URL and a one-time secret (stored as a hash, with its expiry). The other installation's
owner accepts it: their server issues a token for us and sends it, with the secret and its own
public URL, to our handshake; we answer with the token we issued for them. Each side then has a
connection: the token it issued as a hash, the one it received to call the peer."""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from parley.clock import Clock
from parley.errors import Conflict, Invalid
from parley.federation.connections import connection_named
from parley.federation.model import Connection, ConnectionStatus, Invite
from parley.federation.peer_client import PeerClient
from parley.naming import check_name
from parley.people.accounts import require_owner
from parley.people.model import Person
from parley.store import Store, Tx
from parley.tokens import PEER_TOKEN_PREFIX, hash_token, new_peer_token

CODE_PREFIX = "parley-invite:"
DEFAULT_EXPIRY = timedelta(hours=24)
MAX_CODE = 4096
MAX_URL = 2000


@dataclass(frozen=True)
class InviteCode:
    url: str
    secret: str

    def __str__(self) -> str:
        raw = json.dumps({"url": self.url, "secret": self.secret}, separators=(",", ":"))
        return CODE_PREFIX + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    def __repr__(self) -> str:  # never the secret
        return f"InviteCode({self.url!r})"


@dataclass(frozen=True)
class NewInvite:
    invite: Invite
    code: InviteCode


def parse_code(code: str) -> InviteCode:
    """An invite code as ``make_invite`` printed it; Invalid, in words, for anything else."""
    code = code.strip()
    if len(code) > MAX_CODE or not code.startswith(CODE_PREFIX):
        raise Invalid(f"not an invite code: it starts with {CODE_PREFIX!r}", field="code")
    encoded = code.removeprefix(CODE_PREFIX)
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        fields = json.loads(raw)
    except (binascii.Error, ValueError, RecursionError) as exc:  # last: nested too deep
        raise Invalid("the invite code is damaged: copy it whole", field="code") from exc
    if not (
        isinstance(fields, dict)
        and set(fields) == {"url", "secret"}
        and all(isinstance(value, str) and value for value in fields.values())
    ):
        raise Invalid("the invite code is damaged: copy it whole", field="code")
    return InviteCode(check_url(fields["url"]), fields["secret"])


def check_url(url: str, field: str = "url") -> str:
    """A peer's public URL: http(s), with a host; without a trailing slash."""
    parts = urlsplit(url) if len(url) <= MAX_URL else None
    if parts is None or parts.scheme not in {"http", "https"} or not parts.hostname:
        raise Invalid(f"{field}: {url[:100]!r} is not an http(s) URL", field=field)
    return url.rstrip("/")


async def make_invite(
    tx: Tx, clock: Clock, by: Person, name: str, expires: timedelta, public_url: str
) -> NewInvite:
    """An invite for a peer to connect as ``name`` here, good once until ``expires`` passes."""
    require_owner(by, "invite a peer installation")
    await _check_free(tx, name)
    secret = secrets.token_urlsafe(32)
    now = clock.now()
    invite = await tx.invites.add(name, hash_token(secret), now, now + expires, by.id)
    return NewInvite(invite, InviteCode(check_url(public_url, "public_url"), secret))


async def answer_handshake(
    tx: Tx, clock: Clock, secret: str, peer_url: str, peer_token: str
) -> str:
    """The inviter's side: use the invite, make the connection, and return the token issued
    for the peer. A used, expired or unknown secret is refused alike (nothing is made)."""
    invite = await tx.invites.by_secret_hash_locked(hash_token(secret))
    now = clock.now()
    if invite is None or invite.used_at is not None or invite.expires_at <= now:
        raise Invalid("this invite is unknown, used already or expired: ask for a new one")
    if not peer_token.startswith(PEER_TOKEN_PREFIX):
        raise Invalid("the token offered is not a peer token", field="token")
    await _check_free(tx, invite.name)
    await tx.invites.use(invite.id, now)
    issued = new_peer_token()
    await tx.connections.add(
        invite.name, check_url(peer_url), hash_token(issued), peer_token, now, None
    )
    return issued


async def check_acceptable(tx: Tx, by: Person, name: str) -> None:
    require_owner(by, "accept an invite")
    await _check_free(tx, name)


async def record_accepted(
    tx: Tx, clock: Clock, by: Person, name: str, code: InviteCode, issued: str, received: str
) -> Connection:
    """The acceptor's side, once the inviter answered: keep the connection."""
    if not received.startswith(PEER_TOKEN_PREFIX):
        raise Invalid("the inviter answered with something that is not a peer token")
    await _check_free(tx, name)
    return await tx.connections.add(
        name, code.url, hash_token(issued), received, clock.now(), by.id
    )


async def _check_free(tx: Tx, name: str) -> None:
    check_name("connection", name)
    if name == "local":
        raise Invalid("'local' names this installation itself; choose another name", field="name")
    if await tx.connections.by_name(name) is not None:
        raise Conflict(f"a connection named {name!r} exists already")


async def accept_invite(
    store: Store, clock: Clock, peers: PeerClient, public_url: str, by: Person, code: str, name: str
) -> ConnectionStatus:
    invite = parse_code(code)
    async with store.transaction() as tx:
        await check_acceptable(tx, by, name)
    issued = new_peer_token()
    received = await peers.handshake(invite.url, invite.secret, public_url, issued)
    async with store.transaction() as tx:
        await record_accepted(tx, clock, by, name, invite, issued, received)
        connection = await connection_named(tx, name)
    return ConnectionStatus(connection, [], 0)
