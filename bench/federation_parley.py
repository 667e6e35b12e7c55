"""The Parley side of bench/federation.py: two installations on loopback, each with its own
SQLite store, in separate processes. The receiving one is a real ``parley serve`` subprocess
with an exposed agent; the sending one runs in this process (its store, its federation sender,
its HTTP client to the peer, without an HTTP server of its own, which nothing here calls), and
was connected to the other by a real invite and handshake.

Like the reference's client, each of ``concurrency`` lanes sends one text and waits until it is
durable before the next: its frame is committed to the sender's outbox (as an agent's send
writes it, in the lane's own thread, with the thread's next seq; the frames of lanes that send
in the same turn of the event loop in one transaction, group commit), and it is durable when the
receiver's verdict ``accepted`` came back, which the receiver gives only after committing it.
The receiving connection's queue limit is raised past what a run sends: the sink's turns (one
session at a time) run behind the wire, and the bench measures the wire, not the sink.
A latency is that commit → that verdict: one way plus the verdict's way back, so an upper
bound of the one-way latency. The sender settles its outbox after the verdict, off the lane's
clock, as it would for an agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import httpx

from bench.figures import Figures
from bench.ports import free_port
from parley.clock import SystemClock
from parley.context import Context
from parley.federation.frames import FrameVerdict, Verdict, WireFrame
from parley.federation.invites import accept_invite
from parley.federation.model import OutboundText, PeerEndpoint
from parley.settings import Settings
from parley.startup import running
from parley.tls import trusted

START_SECONDS = 60.0
RECEIVER, SENDER, SINK = "two", "one", "sink"  # the connections' names and the receiving agent
# The lanes' threads have no topic on the sending side (no agent sends them): an id no topic has
# orders each thread's frames in the outbox, and is where a refusal's notice would go.
LANE_TOPICS = 1_000_000
QUEUE_LIMIT = 10_000_000  # the receiving connection's: text may wait for the sink's turns


class Receiver:
    """``parley serve`` in a folder of its own, on the embedded store."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
        self.env["PARLEY_PORT"] = str(self.port)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "parley", "serve", "--port", str(self.port)],
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                health = f"http://127.0.0.1:{self.port}/healthz"
                if httpx.get(health, verify=trusted()).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError("the receiving installation did not come up")

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "parley", *args],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode:
            raise RuntimeError(f"parley {' '.join(args)}: {done.stderr}")
        return done.stdout

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(30)


@contextlib.contextmanager
def receiving(folder: Path) -> Iterator[Receiver]:
    receiver = Receiver(folder)
    receiver.start()
    try:
        rules = folder / "sink.yaml"
        rules.write_text("otherwise: []\n")
        receiver.cli("agent", "hire", SINK, "--node", "local", "--brain", f"scripted:{rules}")
        yield receiver
    finally:
        receiver.stop()


class Acks:
    """The sender's verdicts as they come back, by message id: the lanes wait on them."""

    def __init__(self, context: Context) -> None:
        self._waiting: dict[str, asyncio.Future[float]] = {}
        peers = context.runtime.peers
        posted = peers.send

        async def send(peer: PeerEndpoint, frames: Sequence[WireFrame]) -> list[FrameVerdict]:
            verdicts = await posted(peer, frames)
            self._settle(verdicts)
            return verdicts

        # The one client the installation's sender posts through: see each answer as it lands.
        peers.send = send  # type: ignore[method-assign]

    def expect(self, message_id: str) -> asyncio.Future[float]:
        future = asyncio.get_running_loop().create_future()
        self._waiting[message_id] = future
        return future

    def _settle(self, verdicts: Sequence[FrameVerdict]) -> None:
        now = time.perf_counter()
        for verdict in verdicts:
            future = self._waiting.pop(verdict.message_id or "", None)
            if future is None or future.done():
                continue
            if verdict.final_verdict is Verdict.ACCEPTED:
                future.set_result(now)
            else:
                future.set_exception(RuntimeError(f"a frame was refused: {verdict}"))


@contextlib.asynccontextmanager
async def sending(folder: Path, receiver: Receiver) -> AsyncIterator[Context]:
    """The sending installation, connected to ``receiver``, which exposes its sink to it."""
    settings = Settings(
        data_dir=folder / "data", port=free_port(), node_name=SENDER, heartbeat_seconds=3600
    )
    clock = SystemClock()
    async with running(settings, clock) as context:
        code = receiver.cli("connection", "invite", "--name", SENDER).strip().splitlines()[0]
        async with context.store.transaction() as tx:
            owner = await tx.people.by_name(settings.owner_name)
        assert owner is not None
        await accept_invite(
            context.store, clock, context.runtime.peers, settings.base_url, owner, code, RECEIVER
        )
        receiver.cli("connection", "expose", SENDER, SINK)
        receiver.cli("connection", "limit", SENDER, str(QUEUE_LIMIT))
        yield context


class Writer:
    """The lanes' frames, written to the sender's outbox: those that come together (in one
    turn of the event loop) in one transaction, each lane told when its frame is committed
    (group commit)."""

    def __init__(self, context: Context) -> None:
        self._context = context
        self._waiting: list[tuple[OutboundText, asyncio.Future[float]]] = []
        self._writing: set[asyncio.Task[None]] = set()

    async def put(self, frame: OutboundText) -> float:
        """When ``frame`` was committed (``perf_counter``)."""
        committed: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiting.append((frame, committed))
        if len(self._waiting) == 1:  # the task runs once the lanes of this turn put theirs
            task = asyncio.create_task(self._write())
            self._writing.add(task)
            task.add_done_callback(self._writing.discard)
        return await committed

    async def _write(self) -> None:
        waiting, self._waiting = self._waiting, []
        try:
            async with self._context.store.transaction() as tx:
                await tx.frames.put_many([frame for frame, _ in waiting], self._context.clock.now())
                tx.effects.frames.add(RECEIVER)
        except Exception as exc:  # each lane fails with it
            for _, committed in waiting:
                committed.set_exception(exc)
            return
        now = time.perf_counter()
        for _, committed in waiting:
            committed.set_result(now)


class Lane:
    """One thread of texts to the sink, sent one at a time."""

    def __init__(self, number: int) -> None:
        self.topic_id, self.thread_id = LANE_TOPICS + number, secrets.token_hex(16)
        self.seq = 0

    async def send(self, writer: Writer, acks: Acks, text: str) -> float:
        self.seq += 1
        frame = OutboundText(
            connection=RECEIVER,
            thread_id=self.thread_id,
            seq=self.seq,
            message_id=secrets.token_hex(16),
            from_role="bench",
            to_role=SINK,
            body=text,
            topic_id=self.topic_id,
            sender_agent_id=0,
        )
        answered = acks.expect(frame.message_id)
        committed = await writer.put(frame)
        return await answered - committed


async def drive(writer: Writer, acks: Acks, lanes: list[Lane], messages: int) -> Figures:
    numbers = iter(range(messages))
    latencies: list[float] = []

    async def run(lane: Lane) -> None:
        for n in numbers:
            latencies.append(await lane.send(writer, acks, f"message {n}"))

    started = time.perf_counter()
    await asyncio.gather(*(run(lane) for lane in lanes))
    return Figures.of(latencies, time.perf_counter() - started, len(lanes))


async def measure_parley(messages: int, concurrency: int, warmup: int) -> Figures:
    """Figures of ``messages`` texts between two fresh installations, after ``warmup``
    unmeasured ones in the same threads."""
    if messages < 1 or concurrency < 1 or warmup < 0:
        raise ValueError("messages and concurrency are at least 1, warmup at least 0")
    with tempfile.TemporaryDirectory(prefix="parley-fed-bench-") as name:
        folder = Path(name)
        (folder / RECEIVER).mkdir()
        with receiving(folder / RECEIVER) as receiver:
            async with sending(folder / SENDER, receiver) as context:
                acks, writer = Acks(context), Writer(context)
                lanes = [Lane(n) for n in range(concurrency)]
                if warmup:
                    await drive(writer, acks, lanes, warmup)
                return await drive(writer, acks, lanes, messages)
