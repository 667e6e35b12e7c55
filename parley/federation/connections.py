"""Connections as owners manage them: which exist (state, what waits to be sent, when the peer
was last heard, the sender's backoff, its parked threads) and which local agents each peer may
address."""

from __future__ import annotations

from collections.abc import Sequence

from parley.agents.lookup import agent_by_name
from parley.agents.model import Lifecycle
from parley.errors import Invalid, NotFound
from parley.federation.model import Connection, ConnectionStatus
from parley.federation.parking import PARK_AFTER
from parley.people.accounts import require_owner
from parley.people.model import Person
from parley.store import Tx


async def connection_named(tx: Tx, name: str) -> Connection:
    connection = await tx.connections.by_name(name)
    if connection is None:
        raise NotFound(f"no connection named {name!r}", field="connection")
    return connection


async def list_connections(tx: Tx, reader: Person) -> list[ConnectionStatus]:
    require_owner(reader, "read the connections")
    queued, parked = await tx.connections.queued(), await tx.frames.parked(PARK_AFTER)
    return [
        ConnectionStatus(
            c, await tx.connections.exposed(c.id), queued.get(c.name, 0), parked.get(c.name, [])
        )
        for c in await tx.connections.listed()
    ]


async def expose(tx: Tx, by: Person, name: str, agent_names: Sequence[str]) -> ConnectionStatus:
    """From now on the peer may address exactly ``agent_names`` (none: no agent)."""
    require_owner(by, "choose what a peer may address")
    connection = await connection_named(tx, name)
    if connection.is_a2a and agent_names:
        raise Invalid(
            f"{name} is an A2A agent: it is only called, and addresses nothing here (A2A"
            " clients reach the agents of 'parley a2a expose')",
            field="agents",
        )
    agent_ids = []
    for agent_name in agent_names:
        agent = await agent_by_name(tx, agent_name)
        if agent.is_node_session or agent.is_template:
            raise Invalid(f"{agent_name} is not an agent a peer can address", field="agents")
        if agent.lifecycle is Lifecycle.RETIRED:
            raise Invalid(f"{agent_name} is retired and never addressable again", field="agents")
        agent_ids.append(agent.id)
    await tx.connections.expose(connection.id, agent_ids)
    return await status_of(tx, connection)


async def status_of(tx: Tx, connection: Connection) -> ConnectionStatus:
    queued = (await tx.connections.queued()).get(connection.name, 0)
    parked = (await tx.frames.parked(PARK_AFTER)).get(connection.name, [])
    return ConnectionStatus(connection, await tx.connections.exposed(connection.id), queued, parked)
