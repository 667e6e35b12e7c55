"""Batches that overlap: when many threads' text falls due at once, each of a connection's idle
sending loops takes its share of it, so that two batches are out together (while the peer
applies one, the other's verdicts come back and the texts behind them are written) rather
than one batch of everything and a loop with nothing to send. A fake peer over real HTTP
counts the frames of each batch and the batches it holds at once. And when little falls due,
one loop looks, not all of them: the others' claims of nothing were transactions run while
the batch was on its way."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import event

from parley.federation.model import OutboundText
from tests.federation.fake_peer import FakePeerHandler, serving
from tests.support import Harness, eventually

HOLD_SECONDS = 5.0  # the fake peer holds a batch until another comes, at most this long


class Peer:
    """Accepts every frame; holds each batch until a second is in hand (or HOLD_SECONDS)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.most_at_once = 0
        self._in_hand = 0
        self._changed = threading.Condition()

    def apply(self, frames: list[dict[str, Any]]) -> dict[str, Any]:
        with self._changed:
            self.sizes.append(len(frames))
            self._in_hand += 1
            self.most_at_once = max(self.most_at_once, self._in_hand)
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._in_hand > 1, HOLD_SECONDS)
        with self._changed:
            self._in_hand -= 1
        verdicts = [{"message_id": f["message_id"], "verdict": "accepted"} for f in frames]
        return {"verdicts": verdicts}


def _handler(peer: Peer) -> type[FakePeerHandler]:
    class Handler(FakePeerHandler):
        def do_POST(self) -> None:
            self.answer_json(200, peer.apply(self.read_json()["frames"]))

    return Handler


def _text(thread: int) -> OutboundText:
    return OutboundText(
        connection="far",
        thread_id=f"thread{thread}",
        seq=1,
        message_id=f"m{thread}",
        from_role="asker",
        to_role="listener",
        body=f"text {thread}",
        topic_id=1_000_000 + thread,
        sender_agent_id=0,
    )


async def test_text_of_many_threads_due_at_once_goes_in_two_batches_out_together(
    parley: Harness,
) -> None:
    peer = Peer()
    with serving(_handler(peer)) as url:
        now = parley.clock.now()
        async with parley.context.store.transaction() as tx:
            await tx.connections.add("far", url, "issued-hash", "peer-token", now, None)
            await tx.frames.put_many([_text(n) for n in range(64)], now)
            tx.effects.frames.add("far")

        async def all_sent() -> bool:
            return sum(peer.sizes) >= 64

        assert await eventually(all_sent, within=2 * HOLD_SECONDS + 5)
        assert sorted(peer.sizes) == [32, 32], peer.sizes
        assert peer.most_at_once == 2


class HoldingPeer(Peer):
    """Holds every batch until ``release`` (or HOLD_SECONDS)."""

    def __init__(self) -> None:
        super().__init__()
        self.released = threading.Event()

    def apply(self, frames: list[dict[str, Any]]) -> dict[str, Any]:
        with self._changed:
            self.sizes.append(len(frames))
        self.released.wait(HOLD_SECONDS)
        return {
            "verdicts": [{"message_id": f["message_id"], "verdict": "accepted"} for f in frames]
        }


async def test_one_text_due_wakes_one_sending_loop(parley: Harness) -> None:
    peer = HoldingPeer()
    claims: list[str] = []
    engine = getattr(parley.context.store.engine, "sync_engine", parley.context.store.engine)

    def count(_c: Any, _cursor: Any, sql: str, *_: Any) -> None:
        if sql.startswith("UPDATE outbox SET attempts"):
            claims.append(sql)

    with serving(_handler(peer)) as url:
        now = parley.clock.now()
        async with parley.context.store.transaction() as tx:
            await tx.connections.add("far", url, "issued-hash", "peer-token", now, None)
        event.listen(engine, "before_cursor_execute", count)
        try:
            async with parley.context.store.transaction() as tx:
                await tx.frames.put_many([_text(1)], now)
                tx.effects.frames.add("far")

            async def posted() -> bool:
                return peer.sizes == [1]

            assert await eventually(posted, within=HOLD_SECONDS)
            # The batch is with the peer: every loop that looked has claimed by now.
            assert len(claims) == 1, claims
        finally:
            peer.released.set()
            event.remove(engine, "before_cursor_execute", count)
