"""A2A: the clients an owner let in (each a token, kept as its hash) and the agents exposed to
them. A client's contexts are conversations (``topics.a2a_client_id``, ``a2a_context``)."""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Integer, String, Table, Text, UniqueConstraint

from parley.store.tables.base import metadata
from parley.store.tables.work import SENT_AS_LENGTH
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

# Where a client asked to be told of a task's changes (A2A push notifications): each state the
# task reaches is an outbox item, once (its key: the config, the task, the state); ``done_at``:
# the task's end was queued, nothing more will be.
a2a_push_configs = Table(
    "a2a_push_configs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("client_id", Integer, ForeignKey("a2a_clients.id"), nullable=False),
    Column("message_id", Integer, ForeignKey("messages.id"), nullable=False),
    Column("config_id", String(64), nullable=False),
    Column("url", Text, nullable=False),
    Column("token", Text, nullable=True),
    Column("auth_scheme", String(64), nullable=True),
    Column("auth_credentials", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("done_at", UTCDateTime, nullable=True),
    UniqueConstraint("client_id", "message_id", "config_id", name="uq_a2a_push_config"),
)

# An A2A client's answer to its task's question (an approval it decided): the answer is no text
# of the conversation, so its ``messageId`` is kept here (under client and agent, as
# ``messages.a2a_sent_as`` keeps a text's): sent again, it is found, not taken as a new text.
a2a_answers = Table(
    "a2a_answers",
    metadata,
    Column("sent_as", String(SENT_AS_LENGTH), primary_key=True),
    Column("approval_id", Integer, ForeignKey("approvals.id"), nullable=False),
    Column("task_message_id", Integer, ForeignKey("messages.id"), nullable=False),
    Column("body", Text, nullable=False),
    Column("answered_at", UTCDateTime, nullable=False),
)
