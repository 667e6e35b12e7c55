"""A connection's life as its owner steers it, on this side: pause (reversible), unpause,
revoke (for good), and its queue limit. A peer that no longer knows our token has revoked the
connection on its side: ours is then revoked too, at that first contact.

Pausing stops every run of its agent conversations, fails the text waiting to be sent (each
sending role told; a close waiting goes after unpause), and from then on sends on it are
refused here and the peer's text is refused with reason ``paused``. Unpausing restarts
nothing. Revoking does what pausing does, closes its agent conversations, and kills both
tokens: the peer's is refused here (told it is revoked), ours is forgotten."""

from __future__ import annotations

from datetime import datetime

from parley.clock import Clock
from parley.errors import Conflict, Invalid
from parley.federation.connections import connection_named, status_of
from parley.federation.dropping import report_dropped
from parley.federation.failures import close_our_side, fail_waiting, paused_here, revoked_here
from parley.federation.model import Connection, ConnectionState, ConnectionStatus
from parley.people.accounts import require_owner
from parley.people.model import Person
from parley.runs.stop import stop_topics
from parley.store import Tx


async def pause(tx: Tx, clock: Clock, by: Person, name: str) -> ConnectionStatus:
    require_owner(by, "pause a connection")
    connection = await _locked(tx, name)
    if connection.state is ConnectionState.REVOKED:
        raise Conflict(f"the connection {name} is revoked for good; there is nothing to pause")
    if connection.state is ConnectionState.ACTIVE:
        now = clock.now()
        await tx.connections.set_state(connection.id, ConnectionState.PAUSED)
        reason = paused_here(name)
        stopped = await stop_topics(tx, await tx.topics.on_connection(name), now, reason)
        await report_dropped(tx, now, name, stopped)  # sent once unpaused
        # A close waiting to be sent stays: it goes after unpause, so the peer's side ends too.
        await fail_waiting(tx, now, name, reason, texts_only=True)
    return await status_of(tx, await _locked(tx, name))


async def unpause(tx: Tx, by: Person, name: str) -> ConnectionStatus:
    """Sends and the peer's text are taken again; nothing that was stopped starts again."""
    require_owner(by, "unpause a connection")
    connection = await _locked(tx, name)
    if connection.state is ConnectionState.REVOKED:
        raise Conflict(f"the connection {name} is revoked for good; it cannot be unpaused")
    await tx.connections.set_state(connection.id, ConnectionState.ACTIVE)
    tx.effects.frames.add(name)  # a close frame put while paused goes now
    return await status_of(tx, await _locked(tx, name))


async def revoke(tx: Tx, clock: Clock, by: Person, name: str) -> ConnectionStatus:
    require_owner(by, "revoke a connection")
    connection = await _locked(tx, name)
    if connection.state is not ConnectionState.REVOKED:
        await end_for_good(tx, clock.now(), connection, revoked_here(name))
    return await status_of(tx, await _locked(tx, name))


async def end_for_good(tx: Tx, now: datetime, connection: Connection, reason: str) -> None:
    """Revoke ``connection`` here (by our owner, or found revoked by the peer)."""
    await tx.connections.set_state(connection.id, ConnectionState.REVOKED)
    await fail_waiting(tx, now, connection.name, reason)
    await close_our_side(tx, now, await tx.topics.on_connection(connection.name), reason)


async def _locked(tx: Tx, name: str) -> Connection:
    connection = await tx.connections.lock((await connection_named(tx, name)).id)
    assert connection is not None  # connections are never deleted
    return connection


async def set_queue_limit(tx: Tx, by: Person, name: str, limit: int | None) -> ConnectionStatus:
    """How much text may wait on this connection, each way (None: the setting's default)."""
    require_owner(by, "change a connection's queue limit")
    connection = await _locked(tx, name)
    if limit is not None and limit < 1:
        raise Invalid("a queue limit is at least 1", field="queue_limit")
    await tx.connections.set_queue_limit(connection.id, limit)
    return await status_of(tx, await _locked(tx, name))
