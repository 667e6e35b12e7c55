"""A2A: the clients an owner let in (each a token, kept as its hash) and the agents exposed to
them. A client's contexts are conversations (``topics.a2a_client_id``, ``a2a_context``)."""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Integer, String, Table

from parley.store.tables.base import metadata
from parley.store.types import UTCDateTime

a2a_clients = Table(
    "a2a_clients",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_by_person_id", Integer, ForeignKey("people.id"), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # Removed: its token answers 401, its contexts are closed; its name stays taken.
    Column("removed_at", UTCDateTime, nullable=True),
)

# The agents an A2A client may reach: each has a card at /a2a/<name>/.
a2a_exposures = Table(
    "a2a_exposures",
    metadata,
    Column("agent_id", Integer, ForeignKey("agents.id"), primary_key=True),
    Column("exposed_at", UTCDateTime, nullable=False),
)
