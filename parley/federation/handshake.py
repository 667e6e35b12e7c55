"""Accepting an invite: the acceptor's server issues a token for the inviter, offers it at the
inviter's handshake with the secret, and keeps the connection once the inviter answered with
its own. No transaction is held while the peer is called."""

from __future__ import annotations

from parley.clock import Clock
from parley.federation.connections import connection_named
from parley.federation.invites import check_acceptable, parse_code, record_accepted
from parley.federation.model import ConnectionStatus
from parley.federation.peer_client import PeerClient
from parley.federation.tokens import new_peer_token
from parley.people.model import Person
from parley.store import Store


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
