"""The Broker contract. Every implementation must pass these; today LocalBroker, NATS next."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from parley.errors import Unavailable
from parley.mesh.broker import Broker
from parley.mesh.local_broker import LocalBroker


@pytest.fixture
async def broker() -> AsyncIterator[Broker]:
    implementation = LocalBroker()
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
    await broker.publish("s.gone", b"x")
    await asyncio.sleep(0.05)
    assert heard == []
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
