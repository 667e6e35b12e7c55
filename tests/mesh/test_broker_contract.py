"""The Broker contract (parley/broker/port.py). Every implementation passes these: LocalBroker
in process, NatsBroker against a real nats-server started for the test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

import pytest

from parley.broker.local import LocalBroker
from parley.broker.nats_broker import NatsBroker
from parley.broker.port import Broker, Delivered, Gathering
from parley.errors import Invalid, Unavailable
from tests.nats_server import NatsServer

WAIT = 10  # seconds before a test that waits for a delivery gives up (a hang guard only)


@pytest.fixture(params=["local", "nats"])
async def broker(request: pytest.FixtureRequest) -> AsyncIterator[Broker]:
    implementation: Broker
    if request.param == "local":
        implementation = LocalBroker()
    else:
        server: NatsServer = request.getfixturevalue("nats_server")
        implementation = await NatsBroker.connect(server.url)
    yield implementation
    await implementation.close()


async def test_publish_reaches_every_subscriber(broker: Broker) -> None:
    received: list[tuple[str, bytes]] = []
    done = asyncio.Event()

    def collector(name: str):  # type: ignore[no-untyped-def]
        async def handle(data: bytes) -> None:
            received.append((name, data))
            if len(received) == 2:
                done.set()

        return handle

    await broker.subscribe("s.one", collector("a"))
    await broker.subscribe("s.one", collector("b"))
    await broker.subscribe("s.other", collector("c"))
    await broker.publish("s.one", b"hello")
    await asyncio.wait_for(done.wait(), 2)
    assert sorted(received) == [("a", b"hello"), ("b", b"hello")]


async def test_request_gets_the_reply(broker: Broker) -> None:
    async def echo(data: bytes) -> bytes:
        return data.upper()

    await broker.subscribe("s.echo", echo)
    assert await broker.request("s.echo", b"ping", timeout=2) == b"PING"


async def test_request_without_a_listener_is_unavailable(broker: Broker) -> None:
    with pytest.raises(Unavailable, match=r"nobody listens on s\.none"):
        await broker.request("s.none", b"?", timeout=1)


async def test_request_that_is_not_answered_in_time_is_unavailable(broker: Broker) -> None:
    async def slow(data: bytes) -> bytes:
        await asyncio.sleep(5)
        return data

    await broker.subscribe("s.slow", slow)
    with pytest.raises(Unavailable, match=r"no answer on s\.slow"):
        await broker.request("s.slow", b"?", timeout=0.05)


async def test_unsubscribed_handlers_hear_nothing(broker: Broker) -> None:
    heard: list[bytes] = []

    async def handle(data: bytes) -> None:
        heard.append(data)

    subscription = await broker.subscribe("s.gone", handle)
    await subscription.unsubscribe()
    witnessed = asyncio.Event()

    async def witness(data: bytes) -> None:
        witnessed.set()

    # A subscriber of the subject still there hears the message: it was delivered by then.
    still = await broker.subscribe("s.gone", witness)
    await broker.publish("s.gone", b"x")
    await asyncio.wait_for(witnessed.wait(), WAIT)
    assert heard == []
    await still.unsubscribe()
    with pytest.raises(Unavailable):
        await broker.request("s.gone", b"x", timeout=0.1)


async def test_a_failing_subscriber_does_not_hurt_the_publisher(broker: Broker) -> None:
    heard = asyncio.Event()

    async def broken(data: bytes) -> None:
        raise RuntimeError("boom")

    async def fine(data: bytes) -> None:
        heard.set()

    await broker.subscribe("s.mixed", broken)
    await broker.subscribe("s.mixed", fine)
    await broker.publish("s.mixed", b"x")
    await asyncio.wait_for(heard.wait(), 2)


async def test_a_subscriber_gets_one_publisher_s_messages_in_order(broker: Broker) -> None:
    """As on NATS: a turn's reply chunks and its ending must not overtake each other."""
    received: list[bytes] = []
    done = asyncio.Event()

    async def slow_then_fast(data: bytes) -> None:
        if data == b"0":
            await asyncio.sleep(0.05)  # the first message is handled slowly...
        received.append(data)
        if len(received) == 20:
            done.set()

    await broker.subscribe("s.ordered", slow_then_fast)
    for n in range(20):
        await broker.publish("s.ordered", str(n).encode())
    await asyncio.wait_for(done.wait(), 2)
    assert received == [str(n).encode() for n in range(20)]  # ...and still none overtakes it


async def test_a_listener_s_error_reaches_the_one_who_asked(broker: Broker) -> None:
    async def refuse(data: bytes) -> bytes:
        raise Invalid("bad turn request: no run id")

    await broker.subscribe("s.refuse", refuse)
    with pytest.raises(Invalid, match="bad turn request: no run id"):
        await broker.request("s.refuse", b"?", timeout=2)


class Collector:
    """A durable handler that keeps what it was handed, batch by batch."""

    def __init__(self) -> None:
        self.batches: list[list[bytes]] = []
        self.subjects: list[str] = []  # each message's, in order
        self._changed = asyncio.Event()

    @property
    def received(self) -> list[bytes]:
        return [data for batch in self.batches for data in batch]

    async def __call__(self, batch: Sequence[Delivered]) -> None:
        self.batches.append([message.data for message in batch])
        self.subjects += [message.subject for message in batch]
        self._changed.set()

    async def until(self, count: int) -> list[bytes]:
        async def enough() -> None:
            while len(self.received) < count:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(enough(), WAIT)
        return self.received


async def test_what_is_sent_durably_reaches_the_consumer_in_order(broker: Broker) -> None:
    collector = Collector()
    await broker.consume("d.events", "hub", collector)
    sent = [f"m{n}".encode() for n in range(50)]
    for n, data in enumerate(sent):
        await broker.send_durable("d.events", data, f"id-{n}")
    assert await collector.until(50) == sent


async def test_a_consumer_gets_what_was_sent_before_it_came(broker: Broker) -> None:
    await broker.send_durable("d.early", b"first", "1")
    await broker.send_durable("d.early", b"second", "2")
    collector = Collector()
    await broker.consume("d.early", "hub", collector)
    assert await collector.until(2) == [b"first", b"second"]


async def test_the_same_message_id_is_stored_once(broker: Broker) -> None:
    await broker.send_durable("d.dedup", b"outcome", "run-1:finished")
    await broker.send_durable("d.dedup", b"outcome again", "run-1:finished")
    await broker.send_durable("d.dedup", b"next", "run-2:finished")
    collector = Collector()
    await broker.consume("d.dedup", "hub", collector)
    assert await collector.until(2) == [b"outcome", b"next"]
    await broker.send_durable("d.dedup", b"late copy", "run-2:finished")
    await broker.send_durable("d.dedup", b"marker", "marker")
    assert await collector.until(3) == [b"outcome", b"next", b"marker"]


async def test_a_handler_that_raises_gets_the_same_messages_again(broker: Broker) -> None:
    collector = Collector()
    tries: list[list[bytes]] = []

    async def fails_once(batch: Sequence[Delivered]) -> None:
        tries.append([message.data for message in batch])
        if len(tries) == 1:
            raise RuntimeError("the store is away")
        await collector(batch)

    await broker.send_durable("d.retry", b"one", "1")
    await broker.consume("d.retry", "hub", fails_once)
    await broker.send_durable("d.retry", b"two", "2")
    assert await collector.until(2) == [b"one", b"two"]
    assert tries[0][0] == b"one" and tries[1][0] == b"one"  # the failed one first, again


async def test_a_batch_is_acknowledged_only_once_its_handler_returned(broker: Broker) -> None:
    """A consumer stopped in the middle of a batch (a hub stopping, or crashing) leaves it
    stored: the next consumer of that name gets it."""
    started, never = asyncio.Event(), asyncio.Event()

    async def stuck(batch: Sequence[Delivered]) -> None:
        started.set()
        await never.wait()

    await broker.send_durable("d.ack", b"outcome", "1")
    first = await broker.consume("d.ack", "hub", stuck)
    await asyncio.wait_for(started.wait(), WAIT)
    await first.unsubscribe()
    collector = Collector()
    await broker.consume("d.ack", "hub", collector)
    assert await collector.until(1) == [b"outcome"]


async def test_caught_up_returns_once_what_was_stored_before_is_handled(broker: Broker) -> None:
    handled: list[bytes] = []
    release = asyncio.Event()

    async def slow(batch: Sequence[Delivered]) -> None:
        await release.wait()
        handled.extend(message.data for message in batch)

    for n in range(3):
        await broker.send_durable("d.catch", f"m{n}".encode(), str(n))
    consumer = await broker.consume("d.catch", "hub", slow)
    waiting = asyncio.create_task(consumer.caught_up())
    await asyncio.sleep(0.2)
    assert not waiting.done()  # the handler holds the batch
    release.set()
    await asyncio.wait_for(waiting, WAIT)
    assert handled == [b"m0", b"m1", b"m2"]


async def test_caught_up_with_nothing_stored_returns_at_once(broker: Broker) -> None:
    consumer = await broker.consume("d.none", "hub", Collector())
    await asyncio.wait_for(consumer.caught_up(), WAIT)
    await broker.send_durable("d.none", b"one", "1")
    await asyncio.wait_for(consumer.caught_up(), WAIT)


async def test_caught_up_waits_for_a_batch_a_stopped_consumer_left(broker: Broker) -> None:
    """What a consumer took and never acknowledged (a hub killed mid-batch) counts as stored:
    the next consumer of the name is caught up only once it handled it."""
    started, never = asyncio.Event(), asyncio.Event()

    async def stuck(batch: Sequence[Delivered]) -> None:
        started.set()
        await never.wait()

    await broker.send_durable("d.left", b"outcome", "1")
    first = await broker.consume("d.left", "hub", stuck)
    await asyncio.wait_for(started.wait(), WAIT)
    await first.unsubscribe()
    collector = Collector()
    again = await broker.consume("d.left", "hub", collector)
    await asyncio.wait_for(again.caught_up(), WAIT)
    assert collector.received == [b"outcome"]


async def test_a_consumer_name_keeps_its_place_while_away(broker: Broker) -> None:
    collector = Collector()
    consumer = await broker.consume("d.away", "hub", collector)
    await broker.send_durable("d.away", b"before", "1")
    assert await collector.until(1) == [b"before"]
    await consumer.unsubscribe()
    await broker.send_durable("d.away", b"while away", "2")
    back = Collector()
    await broker.consume("d.away", "hub", back)
    assert await back.until(1) == [b"while away"]  # not "before" again


async def test_durable_and_core_subjects_are_apart(broker: Broker) -> None:
    heard: list[bytes] = []
    changed = asyncio.Event()

    async def listen(data: bytes) -> None:
        heard.append(data)
        changed.set()

    collector = Collector()
    await broker.subscribe("d.apart", listen)
    await broker.consume("d.apart", "hub", collector)
    await broker.publish("d.apart", b"core")
    await broker.send_durable("d.apart", b"durable", "1")
    assert await collector.until(1) == [b"durable"]
    # A marker on each path, sent after both: what either would hear of the other's comes first.
    await broker.publish("d.apart", b"core marker")
    await broker.send_durable("d.apart", b"durable marker", "2")
    assert await collector.until(2) == [b"durable", b"durable marker"]
    while b"core marker" not in heard:
        changed.clear()
        await asyncio.wait_for(changed.wait(), WAIT)
    assert heard == [b"core", b"core marker"]  # the subscriber heard the core messages only
    assert collector.received == [b"durable", b"durable marker"]  # the consumer durable only


async def test_a_durable_subject_has_one_consumer_name(broker: Broker) -> None:
    await broker.consume("d.one", "hub", Collector())
    with pytest.raises(Invalid, match=r"d\.one"):
        await broker.consume("d.one", "another", Collector())


async def test_a_closed_broker_stores_nothing(broker: Broker) -> None:
    assert broker.state().connected
    await broker.close()
    assert broker.state().status == "closed"
    with pytest.raises(Unavailable, match="closed"):
        await broker.send_durable("d.closed", b"x", "1")


def _until_three(batch: Sequence[bytes]) -> bool:
    return len(batch) < 3


class Asked:
    """A gathering's ``more_due`` that keeps each batch it was asked about: a consumer asks
    about the batch it holds, so a test can wait until a message is held rather than sleep."""

    def __init__(self, more_due: Callable[[Sequence[bytes]], bool]) -> None:
        self._more_due = more_due
        self.batches: list[list[bytes]] = []
        self._changed = asyncio.Event()

    def __call__(self, batch: Sequence[bytes]) -> bool:
        self.batches.append(list(batch))
        self._changed.set()
        return self._more_due(batch)

    async def about(self, batch: list[bytes]) -> None:
        async def asked() -> None:
            while batch not in self.batches:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(asked(), WAIT)


async def test_a_consumer_gathers_what_is_due_into_one_batch(broker: Broker) -> None:
    """Three messages sent apart, the first alone for a while: while more is due, the consumer
    waits for it, and the three are handled together."""
    collector = Collector()
    asked = Asked(_until_three)
    await broker.consume("d.gather", "hub", collector, Gathering(asked, within=WAIT))
    await broker.send_durable("d.gather", b"one", "1")
    await asked.about([b"one"])  # the consumer holds "one" and is told more is due
    assert collector.batches == []
    await broker.send_durable("d.gather", b"two", "2")
    await broker.send_durable("d.gather", b"three", "3")
    assert await collector.until(3) == [b"one", b"two", b"three"]
    assert collector.batches == [[b"one", b"two", b"three"]]


async def test_a_consumer_waits_no_longer_than_its_gathering_says(broker: Broker) -> None:
    """More is always due here, and none comes: the batch is handed over all the same, once
    the gathering's wait is over (well within the test's guard)."""
    collector = Collector()
    always = Gathering(lambda batch: True, within=0.2)
    await broker.consume("d.gather-bounded", "hub", collector, always)
    await broker.send_durable("d.gather-bounded", b"alone", "1")
    assert await collector.until(1) == [b"alone"]
    await broker.send_durable("d.gather-bounded", b"next", "2")
    assert await collector.until(2) == [b"alone", b"next"]
    assert collector.batches == [[b"alone"], [b"next"]]


async def test_a_consumer_with_nothing_more_due_hands_its_batch_over_at_once(
    broker: Broker,
) -> None:
    """Nothing more is due: no wait at all (a wait of the gathering's minute would outlast the
    test's guard)."""
    collector = Collector()
    never = Gathering(lambda batch: False, within=60)
    await broker.consume("d.gather-none", "hub", collector, never)
    await broker.send_durable("d.gather-none", b"first", "1")
    assert await collector.until(1) == [b"first"]
    await broker.send_durable("d.gather-none", b"second", "2")
    assert await collector.until(2) == [b"first", b"second"]


async def test_a_gathering_consumer_stopped_while_it_waits_leaves_its_batch_stored(
    broker: Broker,
) -> None:
    """A consumer stopped while it gathers (a hub stopping) handed nothing over: the next
    consumer of that name gets the messages."""
    asked = Asked(lambda batch: True)
    first = Collector()
    subscription = await broker.consume("d.gather-stop", "hub", first, Gathering(asked, 60))
    await broker.send_durable("d.gather-stop", b"held", "1")
    await asked.about([b"held"])  # the consumer holds it, and waits for more
    await subscription.unsubscribe()
    assert first.batches == []
    collector = Collector()
    await broker.consume("d.gather-stop", "hub", collector)
    assert await collector.until(1) == [b"held"]


async def test_a_gathering_that_fails_hands_the_batch_over_as_it_is(broker: Broker) -> None:
    """The gathering is the consumer's caller's code: when it raises, the batch goes as it is
    and the consumer lives on."""

    def broken(batch: Sequence[bytes]) -> bool:
        raise RuntimeError("a bug in the caller")

    collector = Collector()
    await broker.consume("d.gather-broken", "hub", collector, Gathering(broken, within=60))
    await broker.send_durable("d.gather-broken", b"first", "1")
    assert await collector.until(1) == [b"first"]
    await broker.send_durable("d.gather-broken", b"second", "2")
    assert await collector.until(2) == [b"first", b"second"]


# Wildcards, and the subject each message came on: how the hub knows which node said what.


async def test_a_wildcard_subscriber_learns_each_message_s_subject(broker: Broker) -> None:
    heard: list[Delivered] = []
    done = asyncio.Event()

    async def listen(message: Delivered) -> None:
        heard.append(message)
        if len(heard) == 3:
            done.set()

    await broker.subscribe_with_subject("w.events.*", listen)
    await broker.publish("w.events.alpha", b"a")
    await broker.publish("w.events", b"none: one token short")
    await broker.publish("w.events.alpha.deeper", b"none: one token too many")
    await broker.publish("w.events.beta", b"b")
    await broker.publish("w.other.gamma", b"none: another subject")
    await broker.publish("w.events.gamma", b"c")
    await asyncio.wait_for(done.wait(), WAIT)
    assert heard == [
        Delivered("w.events.alpha", b"a"),
        Delivered("w.events.beta", b"b"),
        Delivered("w.events.gamma", b"c"),
    ]


async def test_a_tail_wildcard_stands_for_one_token_or_more(broker: Broker) -> None:
    heard: list[str] = []
    done = asyncio.Event()

    async def listen(message: Delivered) -> None:
        heard.append(message.subject)
        if len(heard) == 2:
            done.set()

    await broker.subscribe_with_subject("w.tail.>", listen)
    await broker.publish("w.tail", b"none")
    await broker.publish("w.tail.one", b"x")
    await broker.publish("w.tail.one.two", b"x")
    await asyncio.wait_for(done.wait(), WAIT)
    assert heard == ["w.tail.one", "w.tail.one.two"]


async def test_a_plain_subscriber_of_a_wildcard_gets_the_bytes(broker: Broker) -> None:
    heard = asyncio.Queue[bytes]()

    async def listen(data: bytes) -> None:
        heard.put_nowait(data)

    await broker.subscribe("w.plain.*", listen)
    await broker.publish("w.plain.node", b"chunk")
    assert await asyncio.wait_for(heard.get(), WAIT) == b"chunk"


async def test_a_request_on_a_wildcard_is_answered_knowing_its_subject(broker: Broker) -> None:
    async def answer(message: Delivered) -> bytes:
        return message.subject.encode()

    await broker.subscribe_with_subject("w.ask.*", answer)
    assert await broker.request("w.ask.gpu1", b"?", timeout=WAIT) == b"w.ask.gpu1"


async def test_an_unsubscribed_wildcard_hears_nothing(broker: Broker) -> None:
    heard: list[bytes] = []

    async def listen(message: Delivered) -> None:
        heard.append(message.data)

    subscription = await broker.subscribe_with_subject("w.gone.*", listen)
    await subscription.unsubscribe()
    await broker.publish("w.gone.node", b"x")
    with pytest.raises(Unavailable):
        await broker.request("w.gone.node", b"x", timeout=0.1)
    assert heard == []


async def test_a_durable_consumer_of_a_wildcard_gets_every_node_s_messages_in_order(
    broker: Broker,
) -> None:
    """Each node stores on a subject of its own; the one consumer gets them all, in the order
    they were stored, each with the subject it was sent on — what was sent before it came
    included."""
    await broker.send_durable("w.ends.alpha", b"early", "0")
    collector = Collector()
    await broker.consume("w.ends.*", "hub", collector)
    sent = [(f"w.ends.{'alpha' if n % 2 else 'beta'}", f"m{n}".encode()) for n in range(20)]
    for n, (subject, data) in enumerate(sent):
        await broker.send_durable(subject, data, f"id-{n + 1}")
    await broker.send_durable("w.ends", b"not one of them", "other")
    assert await collector.until(21) == [b"early"] + [data for _, data in sent]
    assert collector.subjects == ["w.ends.alpha"] + [subject for subject, _ in sent]


async def test_a_durable_wildcard_and_a_subject_it_stands_for_are_not_both_consumed(
    broker: Broker,
) -> None:
    """A stored message goes to one consumer only (a work queue)."""
    await broker.consume("w.taken.*", "hub", Collector())
    with pytest.raises(Invalid):
        await broker.consume("w.taken.gpu1", "another", Collector())


async def test_a_durable_wildcard_and_the_subject_one_token_short_are_apart(
    broker: Broker,
) -> None:
    """What was stored on a subject before it had one per node is still read, by a consumer of
    its own, and never by the wildcard's."""
    await broker.send_durable("w.split", b"before", "1")
    per_node, earlier = Collector(), Collector()
    await broker.consume("w.split.*", "hub-by-node", per_node)
    await broker.consume("w.split", "hub", earlier)
    await broker.send_durable("w.split.alpha", b"after", "2")
    assert await earlier.until(1) == [b"before"]
    assert await per_node.until(1) == [b"after"]
    assert (earlier.subjects, per_node.subjects) == (["w.split"], ["w.split.alpha"])


async def test_a_message_id_is_stored_once_whatever_its_subject(broker: Broker) -> None:
    """The duplicate window holds across a consumer's subjects (one JetStream stream)."""
    collector = Collector()
    await broker.consume("w.dedup.*", "hub", collector)
    await broker.send_durable("w.dedup.alpha", b"first", "same")
    await broker.send_durable("w.dedup.beta", b"copy", "same")
    await broker.send_durable("w.dedup.beta", b"marker", "marker")
    assert await collector.until(2) == [b"first", b"marker"]


async def test_caught_up_covers_every_subject_of_a_wildcard(broker: Broker) -> None:
    handled: list[bytes] = []
    release = asyncio.Event()

    async def slow(batch: Sequence[Delivered]) -> None:
        await release.wait()
        handled.extend(message.data for message in batch)

    await broker.send_durable("w.catch.alpha", b"a", "1")
    await broker.send_durable("w.catch.beta", b"b", "2")
    consumer = await broker.consume("w.catch.*", "hub", slow)
    waiting = asyncio.create_task(consumer.caught_up())
    await asyncio.sleep(0.2)
    assert not waiting.done()  # the handler holds the batch
    release.set()
    await asyncio.wait_for(waiting, WAIT)
    assert sorted(handled) == [b"a", b"b"]
