"""Constraint violations turned into sentences a person can act on.

PostgreSQL names the constraint; SQLite names the columns, and for a foreign key nothing at all.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy.exc import IntegrityError

from parley.errors import Conflict

NODE_SESSION_KEPT = "every node keeps its own node session: it cannot be removed, moved or swapped"
SQLITE_FOREIGN_KEY = "FOREIGN KEY constraint failed"
# An A2A client's messageId it sent the agent before: the A2A edge answers with that text's task.
SENT_BEFORE = "sent_before"


class Known(NamedTuple):
    markers: tuple[str, ...]  # what either backend says
    meaning: str
    reason: str | None = None  # how a caller that acts on it tells it apart


KNOWN = [
    Known(
        ("uq_agents_one_session_per_node", "UNIQUE constraint failed: agents.node_id"),
        "a node has exactly one node session, and this node has one already",
    ),
    Known(("fk_nodes_session_agent",), NODE_SESSION_KEPT),
    Known(
        ("kind_lifecycle",),
        "a node session has no hiring lifecycle, and a hired agent has no other states",
    ),
    Known(
        ("agents_name_key", "UNIQUE constraint failed: agents.name"),
        "an agent with that name already exists (names are never reused)",
    ),
    Known(
        ("people_name_key", "UNIQUE constraint failed: people.name"),
        "a person with that name already exists",
    ),
    Known(
        ("ux_node_credentials_live", "UNIQUE constraint failed: node_credentials.node"),
        "this node name was given credentials meanwhile: pass --replace to revoke them",
    ),
    Known(
        ("ux_messages_a2a_sent_as", "UNIQUE constraint failed: messages.a2a_sent_as"),
        "this client sent a message with this messageId before",
        SENT_BEFORE,
    ),
]


def explain(error: IntegrityError, at_commit: bool) -> Conflict:
    """``at_commit``: the violation surfaced at COMMIT, so it is of a deferred constraint."""
    said = str(error.orig)
    if at_commit and said == SQLITE_FOREIGN_KEY:
        # SQLite does not say which key; the node's session key is the only deferred one.
        return Conflict(NODE_SESSION_KEPT)
    for known in KNOWN:
        if any(marker in said for marker in known.markers):
            fields = {"reason": known.reason} if known.reason else {}
            return Conflict(known.meaning, **fields)
    return Conflict(f"the change breaks a rule of the store: {said}")
