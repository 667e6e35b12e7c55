"""What only the NATS broker has: a server that restarts, credentials, TLS, a bad address."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client

from bench.ports import free_port
from parley.broker import nats_durable
from parley.broker.nats_broker import NatsBroker, _server_requires_tls
from parley.broker.nats_url import parse_nats_url
from parley.broker.port import Broker, Delivered
from parley.errors import Unavailable
from tests.nats_server import NatsServer, running_nats
from tests.support import eventually

WAIT = 20  # seconds: a hang guard only (a reconnect takes about a second)


async def holds(check: Callable[[], bool], what: str) -> None:
    async def now() -> bool:
        return check()

    assert await eventually(now, WAIT), f"never: {what}"


def recorder(applied: list[bytes]) -> Callable[[Sequence[Delivered]], Awaitable[None]]:
    async def apply(batch: Sequence[Delivered]) -> None:
        applied.extend(message.data for message in batch)

    return apply


async def test_a_restarted_server_loses_nothing_and_delivers_nothing_twice(
    nats_server: NatsServer,
) -> None:
    hub = await NatsBroker.connect(nats_server.url)
    node = await NatsBroker.connect(nats_server.url)
    applied: list[bytes] = []
    await hub.consume("d.outcomes", "hub", recorder(applied))
    sent = [f"outcome {n}".encode() for n in range(40)]
    try:
        for n in range(20):
            await node.send_durable("d.outcomes", sent[n], f"run-{n}:finished")
        await holds(lambda: len(applied) == 20, "the first half applied")

        nats_server.stop()
        await holds(lambda: not node.state().connected, "the node sees the broker go")
        assert hub.state().status == "reconnecting"
        # The node goes on reporting while the broker is away: each send waits until stored.
        sending = asyncio.create_task(_send_all(node, sent, range(20, 40)))
        await asyncio.sleep(0.3)
        assert not sending.done()
        nats_server.start()

        await asyncio.wait_for(sending, WAIT)
        await holds(lambda: len(applied) >= 40, "the second half applied")
        # A duplicate, were there one, is stored before a marker sent after the last ack.
        await node.send_durable("d.outcomes", b"marker", "marker")
        await holds(lambda: applied[-1:] == [b"marker"], "the marker applied")
        assert applied == [*sent, b"marker"]
        assert hub.state().connected and node.state().connected
    finally:
        await node.close()
        await hub.close()


async def _send_all(broker: Broker, sent: list[bytes], numbers: range) -> None:
    for n in numbers:
        await broker.send_durable("d.outcomes", sent[n], f"run-{n}:finished")


async def test_core_subscriptions_come_back_after_a_restart(nats_server: NatsServer) -> None:
    hub = await NatsBroker.connect(nats_server.url)
    node = await NatsBroker.connect(nats_server.url)

    async def echo(data: bytes) -> bytes:
        return data

    try:
        await node.subscribe("s.node.turn", echo)
        nats_server.stop()
        await holds(lambda: not hub.state().connected, "the hub sees the broker go")
        assert hub.state().last_error
        nats_server.start()
        await holds(lambda: hub.state().connected and node.state().connected, "back")

        async def answered() -> bool:
            try:
                return await hub.request("s.node.turn", b"hi", timeout=1) == b"hi"
            except Unavailable:
                return False

        assert await eventually(answered, WAIT)
    finally:
        await node.close()
        await hub.close()


async def test_a_consumer_gets_what_was_sent_while_its_process_was_gone(
    nats_server: NatsServer,
) -> None:
    first = await NatsBroker.connect(nats_server.url)
    applied: list[bytes] = []
    await first.consume("d.outcomes", "hub", recorder(applied))
    await first.send_durable("d.outcomes", b"one", "1")
    await holds(lambda: applied == [b"one"], "the first applied")
    await first.close()  # the hub stops

    node = await NatsBroker.connect(nats_server.url)
    await node.send_durable("d.outcomes", b"two", "2")
    await node.close()

    again = await NatsBroker.connect(nats_server.url)  # the hub starts again
    try:
        await again.consume("d.outcomes", "hub", recorder(applied))
        await holds(lambda: len(applied) == 2, "the second applied")
        assert applied == [b"one", b"two"]
    finally:
        await again.close()


async def test_an_unreachable_broker_is_one_plain_error() -> None:
    port = free_port()
    with pytest.raises(
        Unavailable, match=rf"cannot reach the broker at nats://127\.0\.0\.1:{port}"
    ):
        await NatsBroker.connect(f"nats://127.0.0.1:{port}", timeout=0.5)


async def test_the_broker_s_credentials_are_checked(tmp_path: Path) -> None:
    with running_nats(tmp_path / "js", ("--user", "hub", "--pass", "s3cret")) as server:
        with pytest.raises(Unavailable, match="refused these credentials") as refused:
            # said at once, not after the whole timeout of trying them again
            await NatsBroker.connect(f"nats://hub:wrong@127.0.0.1:{server.port}", timeout=60)
        assert "wrong" not in str(refused.value)
        broker = await NatsBroker.connect(f"nats://hub:s3cret@127.0.0.1:{server.port}")
        assert broker.state().url == f"nats://127.0.0.1:{server.port}"  # no password shown
        await broker.close()


async def test_a_token_in_the_url_is_the_broker_s_token(tmp_path: Path) -> None:
    with running_nats(tmp_path / "js", ("--auth", "t0ken")) as server:
        with pytest.raises(Unavailable):
            await NatsBroker.connect(f"nats://127.0.0.1:{server.port}", timeout=1)
        broker = await NatsBroker.connect(f"nats://t0ken@127.0.0.1:{server.port}")
        assert broker.state().connected
        await broker.close()


async def test_tls_is_required_when_the_url_says_tls(nats_server: NatsServer) -> None:
    with pytest.raises(Unavailable, match="does not speak TLS"):
        await NatsBroker.connect(f"tls://127.0.0.1:{nats_server.port}")


async def test_a_server_without_jetstream_is_refused(tmp_path: Path) -> None:
    with (
        running_nats(tmp_path / "js", jetstream=False) as server,
        pytest.raises(Unavailable, match="JetStream"),
    ):
        await NatsBroker.connect(server.url)


async def test_a_consumer_outlives_any_number_of_empty_waits(
    nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty wait ends in nats-py's TimeoutError, asyncio's plain one, or an empty batch (the
    server's 408 came first); whichever, the consumer asks again. An idle hub's consumer once
    stopped for good there, and the turns' ends waited unrecorded."""
    monkeypatch.setattr(nats_durable, "FETCH_WAIT", 0.05)  # many empty waits, quickly
    broker = await NatsBroker.connect(nats_server.url)
    try:
        applied: list[bytes] = []
        await broker.consume("d.idle", "hub", recorder(applied))
        await asyncio.sleep(1.5)  # idle: some 30 empty waits, some of them empty batches
        await broker.send_durable("d.idle", b"after a while", "1")
        await holds(lambda: applied == [b"after a while"], "the message applied")
    finally:
        await broker.close()


async def test_what_comes_while_the_handler_works_is_fetched_meanwhile_and_handled_next(
    nats_server: NatsServer,
) -> None:
    """The consumer fetches while its handler works on a batch: what arrives meanwhile is in
    hand (delivered, not yet acknowledged) before the handler returns, and is then handled as
    one batch. Fetching only after each batch cost a hop through the broker a round trip."""
    broker = await NatsBroker.connect(nats_server.url)
    release = asyncio.Event()
    batches: list[list[bytes]] = []

    async def slow(batch: Sequence[Delivered]) -> None:
        batches.append([message.data for message in batch])
        if len(batches) == 1:
            await release.wait()

    try:
        await broker.consume("d.slow", "hub", slow)
        await broker.send_durable("d.slow", b"first", "1")
        await holds(lambda: batches == [[b"first"]], "the first batch in the handler")
        for n in range(2, 5):
            await broker.send_durable("d.slow", f"later {n}".encode(), str(n))
        js = broker._durable.js
        stream = broker._durable.stream

        async def all_fetched() -> bool:
            info = await js.consumer_info(stream, "hub")
            return bool(info.num_ack_pending == 4 and info.num_pending == 0)

        assert await eventually(all_fetched, WAIT), "the later ones fetched meanwhile"
        assert len(batches) == 1  # the handler still holds the first
        release.set()
        later = [b"later 2", b"later 3", b"later 4"]
        await holds(lambda: sum(len(b) for b in batches) == 4, "the later ones handled")
        assert [m for batch in batches[1:] for m in batch] == later
    finally:
        await broker.close()


async def test_a_stopped_consumer_gives_back_what_it_fetched_at_once(
    nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fetched and not handled when the consumer stops: given back (nak), so the next consumer
    gets it at once rather than after the acknowledgement wait (made longer than this test's
    hang guard here); handled exactly once in all."""
    monkeypatch.setattr(nats_durable, "ACK_WAIT", 10 * WAIT)
    first = await NatsBroker.connect(nats_server.url)
    stuck = asyncio.Event()
    held: list[bytes] = []

    async def never(batch: Sequence[Delivered]) -> None:
        held.extend(message.data for message in batch)
        stuck.set()
        await asyncio.Event().wait()  # until cancelled

    await first.consume("d.back", "hub", never)
    for n in range(3):
        await first.send_durable("d.back", f"m{n}".encode(), str(n))
    await asyncio.wait_for(stuck.wait(), WAIT)
    await first.close()

    again = await NatsBroker.connect(nats_server.url)
    applied: list[bytes] = []
    try:
        await again.consume("d.back", "hub", recorder(applied))
        await holds(lambda: len(applied) >= 3, "all three handled by the next consumer")
        # A duplicate, were there one, would come before a marker sent after all three.
        await again.send_durable("d.back", b"marker", "marker")
        await holds(lambda: applied[-1:] == [b"marker"], "the marker handled")
        assert sorted(applied) == [b"m0", b"m1", b"m2", b"marker"]
    finally:
        await again.close()


async def test_an_idle_consumer_stops_without_waiting_for_its_pull(
    nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stopping consumer waits for the pull under way only when the server has something on
    its way to it: an idle one (every message handled) stops at once, where it sat out the
    grace or waited until its pull's own wait ended (both made longer than this test's hang guard
    here), and what it handled stays handled once."""
    monkeypatch.setattr(nats_durable, "GIVE_BACK_GRACE", 10 * WAIT)
    monkeypatch.setattr(nats_durable, "FETCH_WAIT", 10 * WAIT)
    broker = await NatsBroker.connect(nats_server.url)
    applied: list[bytes] = []
    try:
        await broker.consume("d.idle", "hub", recorder(applied))
        await broker.send_durable("d.idle", b"m", "m")
        await holds(lambda: applied == [b"m"], "the message handled")
        await asyncio.wait_for(broker.close(), WAIT)
    finally:
        await broker.close()
    again = await NatsBroker.connect(nats_server.url)
    try:
        await again.consume("d.idle", "hub", recorder(applied))
        await again.send_durable("d.idle", b"marker", "marker")
        await holds(lambda: applied[-1:] == [b"marker"], "the marker handled")
        assert applied == [b"m", b"marker"]
    finally:
        await again.close()


async def test_a_consumer_stopped_as_its_handler_returns_has_acknowledged_what_it_handled(
    nats_server: NatsServer,
) -> None:
    """Stopped the moment its handler returned (the test runs as soon as the handler says so),
    the consumer had acknowledged the batch already: the next consumer does not get it again.
    It gave it back before, awaiting its keep-alive's end first, and the message was handled
    twice."""
    broker = await NatsBroker.connect(nats_server.url)
    applied: list[bytes] = []
    handled = asyncio.Event()

    async def apply(batch: Sequence[Delivered]) -> None:
        applied.extend(message.data for message in batch)
        handled.set()

    try:
        await broker.consume("d.stopped", "hub", apply)
        await broker.send_durable("d.stopped", b"m", "m")
        async with asyncio.timeout(WAIT):  # no task of its own: woken first
            await handled.wait()
        await broker.close()
    finally:
        await broker.close()
    again = await NatsBroker.connect(nats_server.url)
    try:
        await again.consume("d.stopped", "hub", recorder(applied))
        await again.send_durable("d.stopped", b"marker", "marker")  # after m, were m given back
        await holds(lambda: applied[-1:] == [b"marker"], "the marker handled")
        assert applied == [b"m", b"marker"]
    finally:
        await again.close()


async def test_a_stop_does_not_wait_for_an_acknowledgement_the_server_has_not_applied(
    nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An acknowledgement is sent without waiting for the server, so at a stop the server may
    not have applied the last one yet (here it never arrives): the message then looks
    delivered and unacknowledged, held by nobody. The stop compares deliveries, not messages
    held: every delivery already came, so the pull under way brings nothing and the stop is
    immediate, where it sat out the grace. The message stays stored, to come again."""
    monkeypatch.setattr(nats_durable, "GIVE_BACK_GRACE", 10 * WAIT)
    monkeypatch.setattr(nats_durable, "FETCH_WAIT", 10 * WAIT)
    monkeypatch.setattr(nats_durable, "ACK_WAIT", 10 * WAIT)
    unapplied: list[int] = []

    async def never_arrives(batch: Sequence[object]) -> None:
        unapplied.append(len(batch))

    monkeypatch.setattr(nats_durable, "_acknowledge", never_arrives)
    broker = await NatsBroker.connect(nats_server.url)
    applied: list[bytes] = []
    try:
        await broker.consume("d.unapplied", "hub", recorder(applied))
        await broker.send_durable("d.unapplied", b"m", "m")
        await holds(lambda: unapplied == [1], "the message handled, its acknowledgement sent")
        await asyncio.wait_for(broker.close(), WAIT)
    finally:
        await broker.close()
    assert applied == [b"m"]
    watcher = await nats.connect(nats_server.url)
    try:
        stream = await watcher.jetstream().stream_info(nats_durable.STREAM)
        assert stream.state.messages == 1  # unacknowledged: still stored
    finally:
        await watcher.close()


def test_a_nats_py_without_server_info_is_said_once_and_its_connection_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The TLS check reads nats-py's private ``_server_info``; a nats-py lacking it cannot be
    checked: the connection goes on, with a warning that says why."""
    client = Client()
    del client._server_info  # a real nats-py client, as a release without it would build one
    with caplog.at_level(logging.WARNING, "parley.broker.nats_broker"):
        assert _server_requires_tls(client, parse_nats_url("tls://broker.example:4222"))
    assert [r.getMessage() for r in caplog.records if "_server_info" in r.getMessage()]
    client._server_info = {"tls_required": False}
    assert not _server_requires_tls(client, parse_nats_url("tls://broker.example:4222"))
