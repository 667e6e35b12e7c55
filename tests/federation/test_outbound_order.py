"""The sender's claim: a connection's due frames in (thread, seq) order, leaving out whatever
stands behind an earlier frame of its thread that waits (for its retry, or for the answer to
the batch it is in) — a thread whose text waits holds up only its own later text."""

from __future__ import annotations

from datetime import timedelta

from parley.federation.model import OutboundText
from parley.store import Tx
from tests.support import Harness


def _frame(thread: int, seq: int, connection: str = "peer") -> OutboundText:
    return OutboundText(
        connection=connection,
        thread_id=f"t{thread}",
        seq=seq,
        message_id=f"t{thread}-{seq}-{connection}",
        from_role="a",
        to_role="b",
        body=f"{thread}.{seq}",
        topic_id=thread,
        sender_agent_id=1,
    )


async def _claim(tx: Tx, parley: Harness, worker: str = "w") -> list[str]:
    now = parley.clock.now()
    claimed = await tx.frames.claim("peer", worker, now, now + timedelta(seconds=60), 100)
    return [OutboundText.model_validate_json(item.payload).body for item in claimed]


async def test_frames_are_claimed_per_thread_in_order_and_a_waiting_one_holds_its_thread(
    parley: Harness,
) -> None:
    store, now = parley.context.store, parley.clock.now()
    async with store.transaction() as tx:
        for frame in (_frame(2, 1), _frame(1, 2), _frame(1, 1), _frame(3, 1, "other")):
            await tx.frames.put(frame, now)
        assert await _claim(tx, parley) == ["1.1", "1.2", "2.1"]
        ids = {item.key: item.id for item in await tx.outbox.listed([], None, 10)}
        # Thread 1's first frame failed to go and waits for its retry; the second is due again.
        later = now + timedelta(seconds=30)
        await tx.outbox.retry_at(ids["frame:t1-1-peer"], "w", later, "away")
        await tx.outbox.retry_at(ids["frame:t1-2-peer"], "w", now, "away")
        await tx.outbox.delivered(ids["frame:t2-1-peer"], "w", now)
        await tx.frames.put(_frame(2, 2), now)
        await tx.frames.put(_frame(4, 1), now)
        # Thread 1 waits (its 1.2 may not pass 1.1); threads 2 and 4 go on.
        assert await _claim(tx, parley) == ["2.2", "4.1"]
        # Claimed and unanswered, 4.1 holds 4.2 back too, until it is settled.
        await tx.frames.put(_frame(4, 2), now)
        assert await _claim(tx, parley) == []
        await tx.outbox.delivered(ids.get("frame:t4-1-peer") or await _id(tx, "t4-1"), "w", now)
        assert await _claim(tx, parley) == ["4.2"]
    parley.clock.advance(seconds=31)
    async with store.transaction() as tx:
        assert await _claim(tx, parley) == ["1.1", "1.2"]


async def _id(tx: Tx, message: str) -> int:
    (item,) = [i for i in await tx.outbox.listed([], None, 100) if i.key == f"frame:{message}-peer"]
    return item.id
