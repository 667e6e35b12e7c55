"""Exactly one node session per node is a rule of the store itself, not of our code.

These go around the library on purpose: raw SQL is what a bug or a careless script would write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text

from parley.errors import Conflict
from parley.mesh.nodes import register_node
from parley.store import Store
from tests.support import ManualClock


@pytest.fixture
async def store(database_url: str, direct_driver: bool) -> AsyncIterator[Store]:
    opened = await Store.open(database_url, direct_driver=direct_driver)
    async with opened.transaction() as tx:
        await register_node(tx, ManualClock(), "alpha", "host-a", "/w/a")
        await register_node(tx, ManualClock(), "beta", "host-b", "/w/b")
    yield opened
    await opened.close()


async def _execute(store: Store, *statements: str) -> None:
    async with store.transaction() as tx:
        for statement in statements:
            await tx.connection.execute(text(statement))


async def test_registering_a_node_creates_its_node_session(store: Store) -> None:
    async with store.transaction() as tx:
        node = await tx.nodes.by_name("alpha")
        session = await tx.agents.by_name("node:alpha")
    assert node is not None and session is not None
    assert node.session_agent_id == session.id
    assert session.node_name == "alpha" and session.lifecycle.value == "inherent"


async def test_registering_again_keeps_the_same_session(store: Store) -> None:
    async with store.transaction() as tx:
        before = await tx.nodes.by_name("alpha")
        await register_node(tx, ManualClock(), "alpha", "host-a2", "/w/a2")
        after = await tx.nodes.by_name("alpha")
        named = text(
            "SELECT a.id FROM agents a JOIN nodes n ON n.id = a.node_id WHERE n.name = 'alpha'"
        )
        sessions = list(await tx.connection.execute(named))
    assert before is not None and after is not None
    assert after.session_agent_id == before.session_agent_id
    assert after.hostname == "host-a2"
    assert len(sessions) == 1


async def test_a_second_session_for_a_node_is_refused(store: Store) -> None:
    with pytest.raises(Conflict, match="a node has exactly one node session"):
        await _execute(
            store,
            "INSERT INTO agents (name, kind, node_id, lifecycle, brain, max_sessions, created_at)"
            " SELECT 'node:alpha-2', 'node', id, 'inherent', 'offline', 1, joined_at"
            " FROM nodes WHERE name = 'alpha'",
        )


async def test_a_node_session_cannot_be_deleted(store: Store) -> None:
    with pytest.raises(Conflict, match="every node keeps its own node session"):
        await _execute(store, "DELETE FROM agents WHERE name = 'node:alpha'")
    async with store.transaction() as tx:
        assert await tx.agents.by_name("node:alpha") is not None


async def test_a_node_session_cannot_move_to_another_node(store: Store) -> None:
    with pytest.raises(Conflict):
        await _execute(
            store,
            "UPDATE agents SET node_id = (SELECT id FROM nodes WHERE name = 'beta')"
            " WHERE name = 'node:alpha'",
        )


async def test_a_node_session_cannot_be_given_a_lifecycle(store: Store) -> None:
    with pytest.raises(Conflict, match="a node session has no hiring lifecycle"):
        await _execute(store, "UPDATE agents SET lifecycle = 'retired' WHERE name = 'node:alpha'")


async def test_a_node_cannot_point_at_another_nodes_session(store: Store) -> None:
    with pytest.raises(Conflict):
        await _execute(
            store,
            "UPDATE nodes SET session_agent_id = (SELECT id FROM agents WHERE name = 'node:beta')"
            " WHERE name = 'alpha'",
        )


async def test_a_node_cannot_exist_without_a_session(store: Store) -> None:
    with pytest.raises(Conflict):
        await _execute(
            store,
            "INSERT INTO nodes (name, hostname, workspace_root, engram, joined_at, last_seen_at,"
            " session_agent_id) SELECT 'gamma', 'h', '/w', '', joined_at, joined_at, 9999"
            " FROM nodes WHERE name = 'alpha'",
        )
    async with store.transaction() as tx:
        assert await tx.nodes.by_name("gamma") is None


async def test_another_broken_reference_is_not_blamed_on_the_node_session(store: Store) -> None:
    """SQLite names no foreign key: only a violation found at commit is the session's."""
    with pytest.raises(Conflict) as caught:
        await _execute(
            store,
            "INSERT INTO agent_memory (agent_id, note, written_at)"
            " SELECT 9999, 'orphan', joined_at FROM nodes WHERE name = 'alpha'",
        )
    assert "node session" not in caught.value.message
