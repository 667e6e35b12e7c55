"""The outbox worker as a delivery queue: a remote kind sent over real HTTP to a loopback
receiver (retried with growing delays, the same idempotency key every time, a final verdict
never retried, a crashed attempt's lease expiring, a restart picking items up), and local kinds
delivered inside the settling transaction. Time is the test's clock, never the wall's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest

from parley.clock import Clock
from parley.deliveries.backoff import Backoff
from parley.deliveries.deliverers import Deliverers
from parley.deliveries.model import Delivery, DeliveryState, Payload
from parley.errors import Conflict, Unavailable
from parley.hub.outbox import LEASE, OutboxWorker
from parley.store import Store, Tx
from tests.hub.receiver import HANG, Frame, FrameSender, Receiver, receiving
from tests.runs.support import get, script
from tests.support import Harness, ManualClock, delivery_by_key, eventually

# The longest wait every time (no jitter), doubling from 1 s up to 4 s.
NO_JITTER = Backoff(base_seconds=1, cap_seconds=4, draw=lambda bound: bound)


class Note(Payload):
    """A local kind whose delivery writes an echo item, and can be told to fail."""

    kind: ClassVar[str] = "test_note"
    text: str
    verdict: str = "ok"


class Echo(Payload):
    kind: ClassVar[str] = "test_echo"
    text: str


class NoteDeliverer:
    def __init__(self) -> None:
        self.undeliverable_reasons: list[tuple[str, str]] = []

    async def deliver(self, tx: Tx, clock: Clock, payload: Note) -> None:
        if payload.verdict == "unavailable":
            raise Unavailable("the destination is away")
        await tx.outbox.put(f"echo:{payload.text}", Echo(text=payload.text), clock.now())
        if payload.verdict == "conflict":
            raise Conflict("the destination refused it")

    async def undeliverable(self, tx: Tx, clock: Clock, payload: Note, reason: str) -> None:
        self.undeliverable_reasons.append((payload.text, reason))


class EchoDeliverer:
    async def deliver(self, tx: Tx, clock: Clock, payload: Echo) -> None:
        pass

    async def undeliverable(self, tx: Tx, clock: Clock, payload: Echo, reason: str) -> None:
        pass


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    opened = await Store.open(database_url)
    yield opened
    await opened.close()


def _remote(receiver: Receiver) -> tuple[Deliverers, FrameSender]:
    sender = FrameSender(receiver.url)
    return Deliverers().add_remote(Frame, sender), sender


async def _put(store: Store, clock: ManualClock, key: str, payload: Payload) -> None:
    async with store.transaction() as tx:
        assert await tx.outbox.put(key, payload, clock.now())
        tx.effects.outbox = True


async def _item(store: Store, key: str) -> Delivery:
    async with store.transaction() as tx:
        item = await delivery_by_key(tx, key)
    assert item is not None
    return item


async def test_a_remote_item_is_retried_with_growing_delays_and_the_same_key(
    store: Store, clock: ManualClock
) -> None:
    async with receiving() as receiver:
        receiver.script = [503, 503, 503]
        deliverers, _ = _remote(receiver)
        worker = OutboxWorker(store, clock, deliverers, backoff=NO_JITTER)
        await _put(store, clock, "frame:1", Frame(body="hello"))
        delays = []
        for _ in range(3):
            done = await worker.deliver_due()
            item = await _item(store, "frame:1")
            assert (done.attempted, item.state) == (1, DeliveryState.PENDING)
            assert item.last_error == "the receiver answered 503"
            assert item.claimed_by is None and done.next_due == item.next_attempt_at
            assert item.last_attempt_at is not None
            delays.append((item.next_attempt_at - item.last_attempt_at).total_seconds())
            assert (await worker.deliver_due()).attempted == 0  # not due before its time
            clock.advance(seconds=delays[-1])
        assert delays == [1.0, 2.0, 4.0]
        done = await worker.deliver_due()
    delivered = await _item(store, "frame:1")
    assert (done.attempted, done.next_due) == (1, None)
    assert (delivered.state, delivered.attempts) == (DeliveryState.DELIVERED, 4)
    assert delivered.delivered_at == clock.now()
    assert receiver.keys == ["frame:1"] * 4
    assert receiver.accepted == {"frame:1": "hello"}


async def test_a_final_verdict_is_never_retried(store: Store, clock: ManualClock) -> None:
    async with receiving() as receiver:
        receiver.script = [422]
        deliverers, sender = _remote(receiver)
        worker = OutboxWorker(store, clock, deliverers, backoff=NO_JITTER)
        await _put(store, clock, "frame:bad", Frame(body="nonsense"))
        assert (await worker.deliver_due()).next_due is None
        clock.advance(hours=1)
        assert (await worker.deliver_due()).attempted == 0
    item = await _item(store, "frame:bad")
    reason = "the receiver rejected it: scripted 422"
    assert (item.state, item.attempts, item.last_error) == (DeliveryState.FAILED, 1, reason)
    assert sender.undeliverable_reasons == [("nonsense", reason)]
    assert receiver.keys == ["frame:bad"]


async def test_each_failed_attempt_is_one_log_line_without_credentials(
    store: Store, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="parley.hub.outbox")
    async with receiving() as receiver:
        receiver.script = [503, (422, "bad\x00 frame for api_key=sk-live-0123456789abcdef")]
        worker = OutboxWorker(store, clock, _remote(receiver)[0], backoff=NO_JITTER)
        await _put(store, clock, "frame:1", Frame(body="x"))
        await worker.deliver_due()
        clock.advance(seconds=1)
        await worker.deliver_due()
    rejected = "the receiver rejected it: bad frame for api_key=[redacted]"
    assert (await _item(store, "frame:1")).last_error == rejected
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "parley.hub.outbox"]
    assert lines == [
        (
            "INFO",
            'delivery frame:1 retrying kind=test_frame attempt=1 error="the receiver answered 503"'
            " next_attempt=2026-11-01T12:00:01+00:00",
        ),
        (
            "WARNING",
            f'delivery frame:1 failed kind=test_frame attempt=2 error="{rejected}"'
            " next_attempt=none",
        ),
    ]


async def test_a_transient_failure_delays_only_its_own_item(
    store: Store, clock: ManualClock
) -> None:
    async with receiving() as receiver:
        receiver.script = [503]  # the first request only
        deliverers, _ = _remote(receiver)
        notes = NoteDeliverer()
        deliverers.add_local(Note, notes).add_local(Echo, EchoDeliverer())
        worker = OutboxWorker(store, clock, deliverers, backoff=NO_JITTER)
        await _put(store, clock, "frame:a", Frame(body="a"))
        await _put(store, clock, "note:away", Note(text="away", verdict="unavailable"))
        await _put(store, clock, "frame:b", Frame(body="b"))
        await _put(store, clock, "note:ok", Note(text="ok"))
        assert (await worker.deliver_due()).attempted == 4  # one pass: nothing paused the rest
    states = {key: (await _item(store, key)).state for key in ("frame:a", "note:away")}
    assert states == {"frame:a": DeliveryState.PENDING, "note:away": DeliveryState.PENDING}
    assert (await _item(store, "note:away")).next_attempt_at == clock.now() + timedelta(seconds=1)
    assert (await _item(store, "frame:b")).state is DeliveryState.DELIVERED
    assert (await _item(store, "note:ok")).state is DeliveryState.DELIVERED
    assert (await _item(store, "echo:ok")).state is DeliveryState.PENDING  # written by delivery
    assert receiver.accepted == {"frame:b": "b"}


async def test_a_local_delivery_refused_for_good_leaves_nothing_behind(
    store: Store, clock: ManualClock
) -> None:
    notes = NoteDeliverer()
    deliverers = Deliverers().add_local(Note, notes).add_local(Echo, EchoDeliverer())
    worker = OutboxWorker(store, clock, deliverers)
    await _put(store, clock, "note:no", Note(text="no", verdict="conflict"))
    await worker.deliver_due()
    item = await _item(store, "note:no")
    assert (item.state, item.last_error) == (DeliveryState.FAILED, "the destination refused it")
    assert notes.undeliverable_reasons == [("no", "the destination refused it")]
    async with store.transaction() as tx:
        assert await delivery_by_key(tx, "echo:no") is None  # the delivery's write was rolled back


async def test_an_unknown_kind_or_a_malformed_payload_fails_for_good_with_the_reason(
    store: Store, clock: ManualClock
) -> None:
    class OldNote(Payload):  # what an older version might have written as the same kind
        kind: ClassVar[str] = "test_note"
        body: str

    worker = OutboxWorker(store, clock, Deliverers().add_local(Note, NoteDeliverer()))
    await _put(store, clock, "frame:x", Frame(body="x"))
    await _put(store, clock, "note:old", OldNote(body="x"))
    await worker.deliver_due()
    unknown, malformed = await _item(store, "frame:x"), await _item(store, "note:old")
    assert (unknown.state, unknown.last_error) == (
        DeliveryState.FAILED,
        "no deliverer for kind 'test_frame'",
    )
    assert malformed.state is DeliveryState.FAILED
    assert malformed.last_error == (
        "the test_note payload does not fit its model: "
        "text: Field required; body: Extra inputs are not permitted"
    )


async def test_an_attempt_that_died_mid_send_is_made_again_when_its_lease_expires(
    store: Store, clock: ManualClock
) -> None:
    async with receiving() as receiver:
        receiver.script = [HANG]
        crashed = OutboxWorker(store, clock, _remote(receiver)[0], name="crashed")
        await _put(store, clock, "frame:1", Frame(body="once"))
        await crashed.start()
        assert await eventually(lambda: _arrived(receiver, 1))
        await crashed.stop()  # as a process dying mid-send: its claim stays in the store
        held = await _item(store, "frame:1")
        assert (held.state, held.claimed_by, held.attempts) == (DeliveryState.PENDING, "crashed", 1)
        assert held.claimed_until == clock.now() + LEASE

        restarted = OutboxWorker(store, clock, _remote(receiver)[0], name="restarted")
        done = await restarted.deliver_due()
        assert (done.attempted, done.next_due) == (0, held.claimed_until)  # the lease holds
        clock.advance(seconds=LEASE.total_seconds())
        assert (await restarted.deliver_due()).attempted == 1
    item = await _item(store, "frame:1")
    assert (item.state, item.attempts) == (DeliveryState.DELIVERED, 2)
    assert receiver.keys == ["frame:1", "frame:1"]
    assert receiver.accepted == {"frame:1": "once"}
    async with store.transaction() as tx:  # the dead attempt can settle nothing any more
        assert not await tx.outbox.delivered(item.id, "crashed", clock.now())


async def test_a_claim_whose_lease_passed_settles_nothing_once_another_holds_the_item(
    store: Store, clock: ManualClock
) -> None:
    await _put(store, clock, "frame:1", Frame(body="x"))
    async with store.transaction() as tx:
        [item] = await tx.outbox.claim_due("late", clock.now(), clock.now() + LEASE, 10)
    clock.advance(seconds=LEASE.total_seconds())
    async with store.transaction() as tx:
        assert [i.id for i in await tx.outbox.claim_due("b", clock.now(), clock.now(), 10)] == [
            item.id
        ]
        assert not await tx.outbox.delivered(item.id, "late", clock.now())
        assert not await tx.outbox.failed(item.id, "late", "too late")
        assert not await tx.outbox.retry_at(item.id, "late", clock.now(), "too late")
        assert await tx.outbox.delivered(item.id, "b", clock.now())
    assert (await _item(store, "frame:1")).attempts == 2


async def _arrived(receiver: Receiver, count: int) -> bool:
    return len(receiver.keys) >= count


async def test_a_restart_picks_up_what_was_pending(
    database_url: str, store: Store, clock: ManualClock
) -> None:
    async with receiving() as receiver:
        receiver.script = [503]
        worker = OutboxWorker(store, clock, _remote(receiver)[0], backoff=NO_JITTER)
        await _put(store, clock, "frame:retried", Frame(body="again"))
        await worker.deliver_due()  # 503: due again in a second
        await _put(store, clock, "frame:new", Frame(body="new"))  # written, never attempted
        await store.close()  # the process stops
        reopened = await Store.open(database_url)
        try:
            clock.advance(seconds=1)
            again = OutboxWorker(reopened, clock, _remote(receiver)[0])
            assert (await again.deliver_due()).attempted == 2
            assert (await again.deliver_due()).attempted == 0
            states = {key: (await _item(reopened, key)).state for key in receiver.accepted}
        finally:
            await reopened.close()
    assert receiver.keys == ["frame:retried", "frame:retried", "frame:new"]  # in id order
    assert receiver.accepted == {"frame:new": "new", "frame:retried": "again"}
    assert set(states.values()) == {DeliveryState.DELIVERED}


async def test_the_worker_wakes_by_itself_when_a_retry_falls_due(
    store: Store, clock: ManualClock
) -> None:
    at_once = Backoff(draw=lambda bound: 0.0)  # each retry is due as soon as it is scheduled
    async with receiving() as receiver:
        receiver.script = [503, 503]
        worker = OutboxWorker(store, clock, _remote(receiver)[0], backoff=at_once)
        unsubscribe = store.subscribe(worker.on_commit)
        await worker.start()
        try:
            await _put(store, clock, "frame:1", Frame(body="x"))  # one commit, one wake-up
            assert await eventually(lambda: _is(store, "frame:1", DeliveryState.DELIVERED))
        finally:
            await worker.stop()
            unsubscribe()
    assert receiver.keys == ["frame:1"] * 3  # the two retries came from the worker's own timer


async def _is(store: Store, key: str, state: DeliveryState) -> bool:
    return (await _item(store, key)).state is state


async def test_two_workers_claim_different_items_at_once(store: Store, clock: ManualClock) -> None:
    if store.dialect == "sqlite":
        pytest.skip("SQLite has one writer: two claims never overlap there")
    await _put(store, clock, "frame:1", Frame(body="1"))
    await _put(store, clock, "frame:2", Frame(body="2"))
    now, until = clock.now(), clock.now() + LEASE
    claimed, finish = asyncio.Event(), asyncio.Event()

    async def first() -> list[Delivery]:
        async with store.transaction() as tx:
            items = await tx.outbox.claim_due("first", now, until, 1)
            claimed.set()
            await finish.wait()  # still uncommitted while the second claims
            return items

    holding = asyncio.create_task(first())
    await claimed.wait()
    async with store.transaction() as tx:
        # Bounded only against a hang: without SKIP LOCKED this waits for the first forever.
        second = await asyncio.wait_for(tx.outbox.claim_due("second", now, until, 1), 10)
    finish.set()
    assert {item.key for item in [*await holding, *second]} == {"frame:1", "frame:2"}


async def test_a_node_answer_for_a_deleted_task_is_noted_in_the_node_s_topic(
    parley: Harness, tmp_path: Path
) -> None:
    rules = "otherwise: [{ask_node: {node: local, text: 'how busy are you?'}}]"
    await parley.hire("curious", brain=script(tmp_path, "curious", rules))
    await parley.context.runtime.outbox.stop()  # the answer waits in the outbox meanwhile
    task = (
        await parley.owner.post("/api/v1/tasks", json={"agent": "curious", "text": "go"})
    ).json()
    assert await eventually(lambda: _answer_waits(parley))
    assert (await parley.owner.delete(f"/api/v1/tasks/{task['id']}")).status_code == 204
    await parley.context.runtime.outbox.start()
    assert await eventually(lambda: _failed(parley))
    [failed] = await _listed(parley, "failed")
    # Its reason code beside its words (issue 30, point 17).
    why = "thread: the topic it answers was closed (task deleted by owner)"
    assert (failed["kind"], failed["last_error"]) == ("node_answer", why)
    exchanges = await get(parley.owner, "/nodes/local/exchanges")
    notices = [m["body"] for m in exchanges["items"] if m["kind"] == "notice"]
    assert notices == [f"The answer was not delivered to curious: {why}"]


async def _failed(parley: Harness) -> bool:
    return bool(await _listed(parley, "failed"))


async def _answer_waits(parley: Harness) -> bool:
    return bool(await _listed(parley, "pending"))


async def _listed(parley: Harness, state: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = (await get(parley.owner, f"/deliveries?state={state}"))["items"]
    return items


async def test_a_destination_whose_sends_hang_holds_up_only_its_own_kind(
    store: Store, clock: ManualClock
) -> None:
    """A subtask's result, or any local delivery, arrives while a channel's send hangs; the
    hanging kind's next item waits behind it, so that its items still go in order."""
    async with receiving() as receiver:
        receiver.script = [HANG]
        deliverers, sender = _remote(receiver)
        sender.timeout = 3600  # hangs until the lease's bound: longer than any wait below
        deliverers.add_local(Note, NoteDeliverer()).add_local(Echo, EchoDeliverer())
        worker = OutboxWorker(store, clock, deliverers, backoff=NO_JITTER)
        unsubscribe = store.subscribe(worker.on_commit)
        await worker.start()
        try:
            await _put(store, clock, "frame:1", Frame(body="hangs"))
            assert await eventually(lambda: _sent(receiver, ["frame:1"]))
            await _put(store, clock, "frame:2", Frame(body="after it"))
            await _put(store, clock, "note:result", Note(text="a subtask's result"))
            assert await eventually(lambda: _is(store, "note:result", DeliveryState.DELIVERED))
            assert receiver.keys == ["frame:1"]  # frame 2 waits for frame 1's send to return
        finally:
            receiver.release.set()
            await worker.stop()
            unsubscribe()


async def _sent(receiver: Receiver, keys: list[str]) -> bool:
    return receiver.keys == keys


class Limited(Payload):
    kind: ClassVar[str] = "test_limited"
    text: str


class RateLimitedSender:
    """A service that answers its first send with a rate limit of ``wait`` seconds."""

    timeout = 5.0

    def __init__(self, wait: float) -> None:
        self.wait, self.sent = wait, 0

    async def send(self, payload: Limited, idempotency_key: str) -> None:
        self.sent += 1
        if self.sent == 1:
            raise Unavailable("slow down", retry_after_seconds=self.wait)

    async def undeliverable(self, tx: Tx, clock: Clock, payload: Limited, reason: str) -> None:
        pass


async def test_a_rate_limit_s_retry_after_is_waited_out_before_the_next_try(
    store: Store, clock: ManualClock
) -> None:
    sender = RateLimitedSender(wait=90)
    worker = OutboxWorker(store, clock, Deliverers().add_remote(Limited, sender), backoff=NO_JITTER)
    await _put(store, clock, "limited:1", Limited(text="hi"))
    await worker.deliver_due()
    item = await _item(store, "limited:1")
    assert item.next_attempt_at is not None and item.last_attempt_at is not None
    assert (item.next_attempt_at - item.last_attempt_at).total_seconds() == 90  # not backoff's 1
    clock.advance(seconds=89)
    assert (await worker.deliver_due()).attempted == 0
    clock.advance(seconds=1)
    await worker.deliver_due()
    assert (sender.sent, (await _item(store, "limited:1")).state) == (2, DeliveryState.DELIVERED)
