"""The mesh's broker as `parley mesh broker-config` sets it up, tried as an attacker would, on
each nats-server binary: nobody gets in without credentials, a node's credentials reach its own
subjects only, and a revoked node is cut off at once while the others go on."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import nats
import nats.errors
import pytest
from nats.aio.client import Client, RawCredentials
from nats.aio.msg import Msg

from bench.ports import free_port
from parley.broker.nats_broker import NatsBroker, lets_anyone_in
from parley.broker.port import Delivered
from parley.datafolder import DataFolder
from parley.errors import Unavailable
from parley.mesh import hub_broker
from parley.mesh.broker_auth import (
    STREAM,
    BrokerKeys,
    IssuedNode,
    node_inbox_prefix,
    push_revocations,
)
from parley.mesh.broker_config import TlsFiles, write_server_config
from parley.mesh.hub_broker import connect_hub
from parley.settings import Settings
from tests.certificates import self_signed
from tests.nats_server import NatsServer, running_nats_config
from tests.support import eventually

T = TypeVar("T")
# A seed is a whole base32 word of 58 letters, "S" and its kind's first; a public key (56, "O",
# "A" or "U" first) may hold "SO", "SA" or "SU" inside it, which is no seed.
SEED = re.compile(r"(?<![A-Z2-7])S[OAU][A-Z2-7]{56}(?![A-Z2-7])")


@dataclass
class Mesh:
    keys: BrokerKeys
    server: NatsServer
    config: Path

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture
def mesh(tmp_path: Path, nats_binary: str) -> Iterator[Mesh]:
    keys = BrokerKeys.load_or_create(DataFolder(tmp_path / "hub"))
    port = free_port()
    config = write_server_config(keys, tmp_path / "broker", listen=f"127.0.0.1:{port}")
    with running_nats_config(config, port, nats_binary) as server:
        yield Mesh(keys, server, config)


class Watched:
    """A raw nats-py client and what the server said to it (permission violations, its end)."""

    def __init__(self) -> None:
        self.nc = Client()
        self.errors: list[str] = []
        self.closed = asyncio.Event()

    async def connect(self, url: str, node: IssuedNode, name: str) -> Watched:
        await self.nc.connect(
            url,
            user_credentials=RawCredentials(node.creds),
            inbox_prefix=node_inbox_prefix(name),
            allow_reconnect=False,
            error_cb=self._on_error,
            closed_cb=self._on_closed,
        )
        return self

    async def _on_error(self, error: Exception) -> None:
        self.errors.append(str(error))

    async def _on_closed(self) -> None:
        self.closed.set()

    def violations(self) -> str:
        """What the server refused, lower case (2.9 says it so, 2.15 capitalised)."""
        said = "\n".join(self.errors).lower()
        return "\n".join(e for e in said.splitlines() if "permissions violation" in e)

    async def told(self, *refusals: str) -> str:
        """Its violations once each of ``refusals`` is among them. The server sends its -ERR
        to this client, whose reader hands each on in its own time: a marker heard on another
        connection proves the server refused, not that this client has read it yet."""

        async def all_told() -> bool:
            return all(refusal in self.violations() for refusal in refusals)

        await eventually(all_told)
        return self.violations()


@pytest.fixture
async def hub(mesh: Mesh) -> AsyncIterator[NatsBroker]:
    broker = await NatsBroker.connect(mesh.url, credentials=mesh.keys.hub_creds())
    yield broker
    await broker.close()


async def node_broker(mesh: Mesh, name: str, issued: IssuedNode | None = None) -> NatsBroker:
    issued = issued or mesh.keys.issue_node(name)
    return await NatsBroker.connect(
        mesh.url,
        credentials=issued.creds,
        inbox_prefix=node_inbox_prefix(name),
        prepare_stream=False,
    )


def hearing(queue: asyncio.Queue[bytes]) -> Callable[[bytes], Awaitable[None]]:
    """A hub's handler that keeps what it hears, in order."""

    async def handler(data: bytes) -> None:
        await queue.put(data)

    return handler


async def until_heard(
    heard: asyncio.Queue[T], send: Callable[[], Awaitable[None]], tries: int = 20
) -> T:
    """Send a marker until it is heard. Debian's nats-server 2.9 now and then drops the first
    message to a subscription made (and flushed) from another connection just before — seen
    without authentication too; once one is heard, the subscriptions are in place and the
    order of what follows holds."""
    for _ in range(tries):
        await send()
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(heard.get(), 1)
    raise AssertionError(f"no marker heard in {tries} tries")


async def next_of(queue: asyncio.Queue[T]) -> T:
    return await asyncio.wait_for(queue.get(), 10)


async def test_an_anonymous_client_cannot_connect(mesh: Mesh) -> None:
    with pytest.raises(nats.errors.Error, match=r"(?i)authorization"):
        await nats.connect(mesh.url, allow_reconnect=False, connect_timeout=5)
    assert not await lets_anyone_in(mesh.url, 5)


async def test_a_broker_without_authentication_lets_anyone_in(
    nats_server: NatsServer,
) -> None:
    assert await lets_anyone_in(nats_server.url, 5)


async def test_an_unreachable_broker_is_told_after_one_wait_not_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Nobody at the broker's address: the anonymous check, tried first, says so with what its
    last try met, and the hub's own connection is not tried after it (it waited as long again
    for the same silence: an unreachable broker was told after twice the start's wait)."""
    monkeypatch.setattr(hub_broker, "CONNECT_TIMEOUT", 1.0)
    settings = Settings(data_dir=tmp_path / "hub")
    BrokerKeys.load_or_create(DataFolder(settings.data_dir))
    url = f"nats://127.0.0.1:{free_port()}"
    with (
        caplog.at_level(logging.DEBUG, "parley.broker.nats_broker"),
        pytest.raises(Unavailable, match=rf"^cannot reach the broker at {url}: \[Errno \d+\] "),
    ):
        await connect_hub(settings, url)
    tried = [r.getMessage() for r in caplog.records]
    assert tried and all(line.startswith("anonymous check: ") for line in tried)


async def test_the_hub_makes_its_stream_and_reads_a_node_s_durable_end(
    mesh: Mesh, hub: NatsBroker
) -> None:
    got: asyncio.Queue[list[bytes]] = asyncio.Queue()

    async def handle(batch: Sequence[Delivered]) -> None:
        await got.put([delivered.data for delivered in batch])

    await hub.consume("parley.hub.run-outcomes.*", "hub", handle)
    node = await node_broker(mesh, "gpu1")
    try:
        # Stored: JetStream's acknowledgement came back on the node's own inbox.
        await node.send_durable("parley.hub.run-outcomes.gpu1", b"the end", "end-1")
    finally:
        await node.close()
    assert await next_of(got) == [b"the end"]


@pytest.mark.parametrize(
    "subject", ["parley.mesh.register", "parley.mesh.heartbeat", "parley.hub.run-events"]
)
async def test_a_node_speaks_on_its_own_subjects(mesh: Mesh, hub: NatsBroker, subject: str) -> None:
    heard: asyncio.Queue[bytes] = asyncio.Queue()
    await hub.subscribe(f"{subject}.*", hearing(heard))
    node = await node_broker(mesh, "gpu1")
    try:
        assert await until_heard(heard, lambda: node.publish(f"{subject}.gpu1", b"me")) == b"me"
    finally:
        await node.close()


async def test_a_node_answers_the_hub_s_requests(mesh: Mesh, hub: NatsBroker) -> None:
    async def answer(data: bytes) -> bytes:
        return b"done: " + data

    node = await node_broker(mesh, "gpu1")
    answers: asyncio.Queue[bytes] = asyncio.Queue()

    async def ask() -> None:
        with contextlib.suppress(Unavailable):  # nobody listens yet (2.9, see until_heard)
            await answers.put(await hub.request("parley.node.gpu1.turn", b"turn", 10))

    try:
        await node.subscribe("parley.node.gpu1.turn", answer)
        assert await until_heard(answers, ask) == b"done: turn"
    finally:
        await node.close()


async def test_a_node_s_requests_are_answered_on_its_own_inbox(mesh: Mesh, hub: NatsBroker) -> None:
    async def welcome(data: bytes) -> bytes:
        return b"welcome, " + data

    await hub.subscribe("parley.mesh.register.*", welcome)
    node = await node_broker(mesh, "gpu1")
    answers: asyncio.Queue[bytes] = asyncio.Queue()

    async def ask() -> None:
        with contextlib.suppress(Unavailable):
            await answers.put(await node.request("parley.mesh.register.gpu1", b"gpu1", 10))

    try:
        assert await until_heard(answers, ask) == b"welcome, gpu1"
    finally:
        await node.close()


@pytest.mark.parametrize("subject", [">", "parley.node.gpu2.>", "_INBOX.>", "_INBOX_gpu2.>"])
async def test_a_node_cannot_listen_to_another_s_turns(
    mesh: Mesh, hub: NatsBroker, subject: str
) -> None:
    spy = await Watched().connect(mesh.url, mesh.keys.issue_node("gpu1"), "gpu1")
    overheard: asyncio.Queue[Msg] = asyncio.Queue()
    await spy.nc.subscribe(subject, cb=overheard.put)
    own: asyncio.Queue[Msg] = asyncio.Queue()
    await spy.nc.subscribe("parley.node.gpu1.turn", cb=own.put)
    await until_heard(own, lambda: hub.publish("parley.node.gpu1.turn", b"first marker"))
    # What gpu2 and the hub get, then a marker for gpu1 itself: once that marker is in, what
    # came before it would have been delivered too.
    for secret in ("parley.node.gpu2.turn", "_INBOX.hub-reply", "_INBOX_gpu2.reply"):
        await hub.publish(secret, b"run token")
    await hub.publish("parley.node.gpu1.turn", b"marker")
    assert (await next_of(own)).data == b"marker"
    assert overheard.empty()  # not even the markers: the subscription was refused whole
    refusal = f'subscription to "{subject.lower()}"'
    assert refusal in await spy.told(refusal)
    await spy.nc.close()


async def test_a_node_cannot_speak_for_another(mesh: Mesh, hub: NatsBroker) -> None:
    heard: asyncio.Queue[bytes] = asyncio.Queue()
    for subject in ("parley.mesh.>", "parley.hub.run-events.*", f"{STREAM}.parley.hub.>"):
        await hub.subscribe(subject, hearing(heard))
    forger = await Watched().connect(mesh.url, mesh.keys.issue_node("gpu1"), "gpu1")
    own_heartbeat = "parley.mesh.heartbeat.gpu1"
    await until_heard(heard, lambda: forger.nc.publish(own_heartbeat, b"first marker"))
    forged = [
        "parley.mesh.register.gpu2",
        "parley.mesh.register.local",
        "parley.mesh.heartbeat.gpu2",
        "parley.hub.run-events.gpu2",
        f"{STREAM}.parley.hub.run-outcomes.gpu2",
        "parley.node.gpu2.turn",
    ]
    for subject in forged:
        await forger.nc.publish(subject, b"forged")
    await forger.nc.publish(own_heartbeat, b"marker")
    await forger.nc.flush()
    while (got := await next_of(heard)) == b"first marker":  # sent more than once, maybe
        pass
    assert got == b"marker"  # nothing forged came before it
    assert heard.empty()
    refusals = [f'publish to "{subject.lower()}"' for subject in forged]
    told = await forger.told(*refusals)
    for refusal in refusals:
        assert refusal in told
    await forger.nc.close()


async def test_a_revoked_node_is_cut_off_at_once_and_the_others_go_on(
    mesh: Mesh, hub: NatsBroker
) -> None:
    gpu1, gpu2 = mesh.keys.issue_node("gpu1"), mesh.keys.issue_node("gpu2")
    revoked = await Watched().connect(mesh.url, gpu1, "gpu1")
    other = await node_broker(mesh, "gpu2", gpu2)
    heard: asyncio.Queue[bytes] = asyncio.Queue()
    await hub.subscribe("parley.mesh.heartbeat.*", hearing(heard))

    await push_revocations(mesh.url, mesh.keys, {gpu1.public_key: int(time.time())})

    await asyncio.wait_for(revoked.closed.wait(), 10)  # the server dropped its connection
    assert "revoked" in str(revoked.nc.last_error).lower()  # "User Authentication Revoked"
    with pytest.raises(Unavailable, match="refused these credentials"):
        await node_broker(mesh, "gpu1", gpu1)
    heartbeat = lambda: other.publish("parley.mesh.heartbeat.gpu2", b"still here")  # noqa: E731
    assert await until_heard(heard, heartbeat) == b"still here"
    await other.close()


async def test_a_revocation_outlives_a_restart_and_a_new_configuration(
    mesh: Mesh, hub: NatsBroker, tmp_path: Path
) -> None:
    gpu1, gpu2 = mesh.keys.issue_node("gpu1"), mesh.keys.issue_node("gpu2")
    heard: asyncio.Queue[bytes] = asyncio.Queue()
    await hub.subscribe("parley.mesh.heartbeat.*", hearing(heard))
    await push_revocations(mesh.url, mesh.keys, {gpu1.public_key: int(time.time())})
    mesh.server.stop()
    # broker-config run again (same keys, read back from the data folder) before the restart
    keys = BrokerKeys.load(DataFolder(tmp_path / "hub"))
    assert keys is not None
    write_server_config(keys, mesh.config.parent, listen=f"127.0.0.1:{mesh.server.port}")
    mesh.server.start()
    with pytest.raises(Unavailable, match="refused these credentials"):
        await node_broker(mesh, "gpu1", gpu1)
    other = await node_broker(mesh, "gpu2", gpu2)
    # The hub signed in again by itself (a fresh nonce), its subscription with it.
    heartbeat = lambda: other.publish("parley.mesh.heartbeat.gpu2", b"back")  # noqa: E731
    assert await until_heard(heard, heartbeat, tries=60) == b"back"
    await other.close()


async def test_credentials_of_another_operator_are_refused_at_once(
    mesh: Mesh, tmp_path: Path
) -> None:
    stranger = BrokerKeys.load_or_create(DataFolder(tmp_path / "another-hub"))
    with pytest.raises(Unavailable, match="refused these credentials") as refused:
        await NatsBroker.connect(mesh.url, credentials=stranger.hub_creds(), timeout=60)
    assert "SU" not in str(refused.value)


def test_the_configuration_holds_no_secret(tmp_path: Path) -> None:
    keys = BrokerKeys.load_or_create(DataFolder(tmp_path / "hub"))
    text = write_server_config(keys, tmp_path / "broker").read_text()
    assert not SEED.search(text)
    for seed in (keys.operator_seed, keys.system_account_seed, keys.account_seed):
        assert seed not in text
    assert keys.operator_jwt().split(".")[0] in text
    assert f"system_account: {keys.system_account}" in text


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mutual-tls"])
async def test_with_certificates_the_broker_speaks_tls_only(
    tmp_path: Path, nats_binary: str, monkeypatch: pytest.MonkeyPatch, mutual: bool
) -> None:
    cert, key = self_signed(tmp_path, stem="broker")
    keys = BrokerKeys.load_or_create(DataFolder(tmp_path / "hub"))
    port = free_port()
    tls = TlsFiles(cert, key, cert if mutual else None)
    config = write_server_config(keys, tmp_path / "broker", listen=f"127.0.0.1:{port}", tls=tls)
    with running_nats_config(config, port, nats_binary):
        assert _server_info(port)["tls_required"] is True
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the self-signed certificate is trusted
        url = f"tls://localhost:{port}"
        if mutual:  # --tls-ca: a client without a certificate it signed does not get in
            with pytest.raises(Unavailable, match="cannot reach the broker"):
                await NatsBroker.connect(url, credentials=keys.hub_creds(), timeout=2)
        else:
            hub = await NatsBroker.connect(url, credentials=keys.hub_creds())
            await hub.close()


def _server_info(port: int) -> dict[str, object]:
    """The INFO line a server says first to any client, before TLS."""
    with socket.create_connection(("127.0.0.1", port)) as plain:
        line = plain.makefile("rb").readline().decode()
    assert line.startswith("INFO ")
    info: dict[str, object] = json.loads(line.removeprefix("INFO "))
    return info
