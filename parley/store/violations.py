"""Constraint violations turned into sentences a person can act on.

PostgreSQL names the constraint; SQLite names the columns (and, for foreign keys, nothing).
"""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError

from parley.errors import Conflict

# (what either backend says, what it means)
KNOWN = [
    (
        ("uq_agents_one_session_per_node", "UNIQUE constraint failed: agents.node_id"),
        "a node has exactly one node session, and this node has one already",
    ),
    (
        ("fk_nodes_session_agent", "FOREIGN KEY constraint failed"),
        "every node keeps its own node session: it cannot be removed, moved or swapped",
    ),
    (
        ("ck_agents_kind_lifecycle", "kind_lifecycle"),
        "a node session has no hiring lifecycle, and a hired agent has no other states",
    ),
    (
        ("agents_name_key", "UNIQUE constraint failed: agents.name"),
        "an agent with that name already exists (names are never reused)",
    ),
    (
        ("people_name_key", "UNIQUE constraint failed: people.name"),
        "a person with that name already exists",
    ),
]


def explain(error: IntegrityError) -> Conflict:
    said = str(error.orig)
    for markers, meaning in KNOWN:
        if any(marker in said for marker in markers):
            return Conflict(meaning)
    return Conflict(f"the change breaks a rule of the store: {said}")
