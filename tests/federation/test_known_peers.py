"""The frames route's memory of peers' tokens: bounded, oldest out first."""

from __future__ import annotations

from datetime import UTC, datetime

from parley.federation.known_peers import KnownPeers
from parley.federation.model import Connection, ConnectionState


def _connection(number: int) -> Connection:
    return Connection(
        id=number,
        name=f"peer-{number}",
        url=f"http://127.0.0.1:{9000 + number}",
        state=ConnectionState.ACTIVE,
        queue_limit=None,
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        last_contact_at=None,
        failures=0,
        retry_at=None,
        last_error=None,
    )


def test_a_remembered_token_gives_its_connection_and_the_oldest_goes_past_the_limit() -> None:
    known = KnownPeers(limit=2)
    known.remember("h1", _connection(1))
    known.remember("h2", _connection(2))
    known.remember("h1", _connection(1))  # remembered again: still two
    known.remember("h3", _connection(3))
    assert known.get("h1") is None
    assert [known.get(h) for h in ("h2", "h3")] == [_connection(2), _connection(3)]
    assert known.get("unknown") is None
