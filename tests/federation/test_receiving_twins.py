"""The receiver's two paths kept equal: text in threads known here, taken together
(``federation/known_threads.py``), and every frame one by one (``receive_from_peer``, a close).
The same random batches go to two connections, through the batch on one and frame by frame on
the other: the verdicts, and every row they leave (conversations, their text and runs, the
verdicts kept), are the same."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from parley.federation.backlogs import Backlogs
from parley.federation.frames import CloseFrame, TextFrame, WireFrame
from parley.federation.model import Connection
from parley.federation.receiver import _receive, receive_batch
from parley.store.tables import messages, received_frames, runs, topics
from parley.tokens import hash_token
from tests.support import Harness

LIMIT = 10_000  # room for every text: the backlog's bound is the batch's own (one count)
PEERS = count()


@st.composite
def _batches(draw: st.DrawFn) -> list[list[WireFrame]]:
    """Batches of text and closes in three threads; a text's seq mostly its thread's next
    (so that known threads' text goes on), sometimes one off either way, or repeated."""
    sent: dict[str, int] = {}
    batches: list[list[WireFrame]] = []
    for _ in range(draw(st.integers(1, 4))):
        frames: list[WireFrame] = []
        for _ in range(draw(st.integers(1, 6))):
            thread = draw(st.sampled_from(["t1", "t2", "t3"]))
            if draw(st.integers(0, 7)) == 0:
                frames.append(CloseFrame(type="close", thread_id=thread, reason=""))
                continue
            seq = max(1, sent.get(thread, 0) + 1 + draw(st.sampled_from([0, 0, 0, 0, 1, -1])))
            sent[thread] = max(sent.get(thread, 0), seq)
            frames.append(
                TextFrame(
                    type="text",
                    thread_id=thread,
                    seq=seq,
                    message_id=draw(st.sampled_from([f"m{n}" for n in range(12)])),
                    from_role=draw(st.sampled_from(["visitor"] * 5 + ["intruder"])),
                    to_role=draw(st.sampled_from(["host"] * 5 + ["nobody"])),
                    body=draw(st.sampled_from(["hello", "more"])),
                )
            )
        batches.append(frames)
    return batches


BATCHES = _batches()


@dataclass(frozen=True)
class Peer:
    connection: Connection


@pytest.fixture
async def halted(parley: Harness) -> Harness:
    """An agent ``host``; nothing starts, so the rows stay as received."""
    await parley.context.runtime.scheduler.stop()
    await parley.hire("host")
    return parley


async def _peer(parley: Harness) -> Connection:
    async with parley.context.store.transaction() as tx:
        name = f"peer{next(PEERS)}"
        made = await tx.connections.add(
            name, "http://127.0.0.1:9", hash_token(name), "ppt_unused", parley.clock.now(), None
        )
        host = await tx.agents.by_name("host")
        assert host is not None
        await tx.connections.expose(made.id, [host.id])
        return made


async def _one_by_one(parley: Harness, peer: Connection, frames: list[WireFrame]) -> list[Any]:
    """The batch's transaction, each frame through the one-by-one path."""
    async with parley.context.store.transaction() as tx:
        return [await _receive(tx, parley.clock, peer, frame, False) for frame in frames]


async def _rows(parley: Harness, peer: Connection) -> dict[str, list[Any]]:
    """What the peer's frames left, with its name and ids put as what they name."""
    async with parley.context.store.transaction() as tx:

        async def read(query: Any) -> list[dict[str, Any]]:
            return [row._asdict() for row in await tx.connection.execute(query)]

        threads = await read(select(topics).where(topics.c.connection == peer.name))
        ids = {row["id"]: row["thread_id"] for row in threads}
        texts = await read(select(messages).where(messages.c.topic_id.in_(ids)))
        taking = await read(select(runs).where(runs.c.topic_id.in_(ids)))
        kept = await read(select(received_frames).where(received_frames.c.connection_id == peer.id))

    def named(row: dict[str, Any], *dropped: str) -> tuple[Any, ...]:
        fields = {
            key: ids.get(value, value) if key.endswith("topic_id") else value
            for key, value in row.items()
            if key not in ("id", *dropped)
        }
        words = {k: v.replace(peer.name, "PEER") if isinstance(v, str) else v
                 for k, v in fields.items()}  # fmt: skip
        return tuple(sorted(words.items()))

    run_ids = {row["id"]: n for n, row in enumerate(sorted(taking, key=lambda r: r["id"]))}
    return {
        "threads": sorted(map(named, threads), key=repr),
        "texts": sorted(
            (named({**t, "run_id": run_ids.get(t["run_id"])}) for t in texts), key=repr
        ),
        "runs": sorted((named(r, "session_id") for r in taking), key=repr),
        "kept": sorted((named(k, "connection_id") for k in kept), key=repr),
    }


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # two peers an example: no shrinking
)
@given(batches=BATCHES)
async def test_batches_leave_what_their_frames_one_by_one_leave(
    halted: Harness, batches: list[list[WireFrame]]
) -> None:
    parley = halted
    together, alone = await _peer(parley), await _peer(parley)
    for frames in batches:
        store, clock = parley.context.store, parley.clock
        batched = await receive_batch(store, clock, together, frames, LIMIT, Backlogs())
        one_by_one = await _one_by_one(parley, alone, frames)
        assert batched == one_by_one, frames
    assert await _rows(parley, together) == await _rows(parley, alone)
