"""A peer cannot make the sender spin: a peer that keeps asking for a thread again from an
earlier seq gets it again later each time, and past a few times the thread is parked, shown in
``connection list``, while the connection's other threads go on. A sender killed with a batch
out leaves its frames claimed for a short lease only (renewed while the batch is out), and a
peer away is tried again within seconds. A fake peer over real HTTP counts what it is sent; the
clock is a ManualClock, so that nothing is sent again unless the test moves time."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta
from typing import Any

from parley.federation.model import OutboundText
from parley.federation.parking import PARK_AFTER, PARKED_FOR, RESEND_BACKOFF
from parley.federation.peer_client import PeerClient
from parley.federation.sender import FederationSender
from tests.federation.fake_peer import FakePeerHandler, serving
from tests.support import Harness, delivery_by_key, eventually, items
from tests.web.support import signed_in

CONNECTION = "far"


class Peer:
    """Accepts every frame but thread ``confused``'s second, for which it always asks the
    thread again from seq 1 (a peer that lost its place and never finds it)."""

    def __init__(self) -> None:
        self.sent: Counter[str] = Counter()  # by message_id
        self.requests = 0
        self.hold = threading.Event()  # set: each batch is held until ``release``
        self.release = threading.Event()
        self.holding = threading.Event()

    def apply(self, frames: list[dict[str, Any]]) -> dict[str, Any]:
        self.requests += 1
        self.sent.update(frame["message_id"] for frame in frames)
        if self.hold.is_set():
            self.holding.set()
            self.release.wait(10)
        return {"verdicts": [self._verdict(frame) for frame in frames]}

    @staticmethod
    def _verdict(frame: dict[str, Any]) -> dict[str, Any]:
        if frame["thread_id"] == "confused" and frame["seq"] > 1:
            return {"message_id": frame["message_id"], "verdict": "rejected", "expected_seq": 1}
        return {"message_id": frame["message_id"], "verdict": "accepted"}


def _handler(peer: Peer) -> type[FakePeerHandler]:
    class Handler(FakePeerHandler):
        def do_POST(self) -> None:
            self.answer_json(200, peer.apply(self.read_json()["frames"]))

    return Handler


def _text(thread: str, seq: int, topic_id: int) -> OutboundText:
    return OutboundText(
        connection=CONNECTION,
        thread_id=thread,
        seq=seq,
        message_id=f"{thread}-{seq}",
        from_role="asker",
        to_role="listener",
        body=f"{thread} {seq}",
        topic_id=topic_id,
        sender_agent_id=0,
    )


async def _put(parley: Harness, *frames: OutboundText) -> None:
    """Frames in the outbox, the app's own sender not told (the test's sender sends them)."""
    async with parley.context.store.transaction() as tx:
        await tx.frames.put_many(frames, parley.clock.now())


async def _frame(parley: Harness, message_id: str) -> Any:
    async with parley.context.store.transaction() as tx:
        return await delivery_by_key(tx, f"frame:{message_id}")


async def _connection(parley: Harness) -> dict[str, Any]:
    response = await parley.owner.get("/api/v1/connections")
    assert response.status_code == 200, response.text
    (connection,) = items(response.json())
    assert isinstance(connection, dict)
    return connection


async def _add_connection(parley: Harness, url: str) -> None:
    async with parley.context.store.transaction() as tx:
        await tx.connections.add(
            CONNECTION, url, "issued-hash", "peer-token", parley.clock.now(), None
        )


async def test_a_peer_asking_for_a_thread_again_gets_it_later_each_time_then_parks_it(
    parley: Harness,
) -> None:
    peer, client = Peer(), PeerClient()
    with serving(_handler(peer)) as url:
        await _add_connection(parley, url)
        sender = FederationSender(parley.context.store, parley.clock, client, batch=10)
        await _put(parley, _text("confused", 1, 1))
        await sender.send_due(CONNECTION)
        await _put(parley, _text("confused", 2, 1))
        await sender.send_due(CONNECTION)
        assert peer.sent == {"confused-1": 1, "confused-2": 1}
        for resends in range(1, PARK_AFTER + 1):
            # Nothing is due until the backoff has passed: looking again sends nothing.
            for _ in range(3):
                await sender.send_due(CONNECTION)
            assert peer.sent["confused-2"] == resends
            waiting = await _frame(parley, "confused-2")
            wait = waiting.next_attempt_at - parley.clock.now()
            if resends < PARK_AFTER:
                assert wait >= timedelta(seconds=RESEND_BACKOFF.bound(resends) / 2), resends
                assert "the peer expects seq 1 first" in waiting.last_error
                # The earlier text goes again with it, not before it.
                earlier = await _frame(parley, "confused-1")
                assert earlier.next_attempt_at == waiting.next_attempt_at
            else:
                assert wait == PARKED_FOR
                assert waiting.last_error.startswith("parked: the peer asked 8 times")
            if resends == 3:  # another thread's text goes meanwhile
                await _put(parley, _text("calm", 1, 2))
                await sender.send_due(CONNECTION)
                assert (await _frame(parley, "calm-1")).state.value == "delivered"
                assert peer.sent["confused-2"] == resends
            parley.clock.advance(seconds=wait.total_seconds())
            await sender.send_due(CONNECTION)
        assert peer.sent["confused-2"] == PARK_AFTER + 1
        assert peer.sent["calm-1"] == 1
        # Parked again after its hour: in `connection list` with its reason.
        (parked,) = (await _connection(parley))["parked"]
        assert parked.startswith("thread confused: parked: the peer asked")
        async with signed_in(parley) as browser:
            page = await browser.get("/connections")
            assert "thread confused: parked: the peer asked 9 times" in page.text
    await client.close()


async def test_a_killed_senders_frames_go_again_within_a_short_lease(parley: Harness) -> None:
    peer, client = Peer(), PeerClient()
    peer.hold.set()
    with serving(_handler(peer)) as url:
        await _add_connection(parley, url)
        await _put(parley, _text("calm", 1, 2))
        killed = FederationSender(parley.context.store, parley.clock, client, batch=10)
        killed.wake(CONNECTION)
        assert await _until(peer.holding.is_set)
        await killed.stop()  # its batch was out: the frame stays claimed, by a sender now gone
        peer.hold.clear()
        peer.release.set()
        claimed = await _frame(parley, "calm-1")
        assert claimed.claimed_by == killed.name
        assert claimed.next_attempt_at - parley.clock.now() <= timedelta(seconds=15)
        parley.clock.advance(seconds=15)
        restarted = FederationSender(parley.context.store, parley.clock, client, batch=10)
        await restarted.send_due(CONNECTION)
        assert (await _frame(parley, "calm-1")).state.value == "delivered"
        assert peer.sent["calm-1"] == 2
    await client.close()


async def test_a_batch_out_longer_than_its_lease_keeps_its_claim(parley: Harness) -> None:
    peer, client = Peer(), PeerClient()
    peer.hold.set()
    with serving(_handler(peer)) as url:
        await _add_connection(parley, url)
        await _put(parley, _text("calm", 1, 2))
        lease = timedelta(seconds=0.3)
        slow = FederationSender(parley.context.store, parley.clock, client, batch=10, lease=lease)
        await slow.start()
        slow.wake(CONNECTION)
        assert await _until(peer.holding.is_set)
        parley.clock.advance(seconds=60)  # far past the lease it took

        async def renewed() -> bool:
            return bool((await _frame(parley, "calm-1")).claimed_until > parley.clock.now())

        try:
            assert await eventually(renewed)
            other = FederationSender(parley.context.store, parley.clock, client, batch=10)
            await other.send_due(CONNECTION)
            assert peer.sent["calm-1"] == 1  # still the slow one's: not sent twice
        finally:
            peer.release.set()
            await slow.stop()
    await client.close()


async def test_a_peer_away_is_tried_again_within_seconds(parley: Harness) -> None:
    peer, client = Peer(), PeerClient()
    with serving(_handler(peer)) as url:
        pass  # the port is free again: nothing answers there
    await _add_connection(parley, url)
    await _put(parley, _text("calm", 1, 2))
    sender = FederationSender(parley.context.store, parley.clock, client, batch=10)
    for _ in range(12):
        wait = await sender.send_due(CONNECTION)
        connection = await _connection(parley)
        assert "cannot reach the peer" in connection["last_error"]
        assert wait is not None and wait <= 5.0
        parley.clock.advance(seconds=wait)
    assert connection["failures"] == 12
    await client.close()


async def _until(check: Any) -> bool:
    async def holds() -> bool:
        return bool(check())

    return await eventually(holds)
