"""A2A served: messages/s and p50/p99 of ``SendMessage`` against an exposed Parley agent
(``parley serve`` on its embedded SQLite store, its offline brain answering; each message a
durable text, turn and task, answered once its turn's end is committed) beside a2a-sdk's own
sample server (an echo agent, its tasks in memory), in the same run, at the same concurrencies,
through the same a2a-sdk client. Each of ``concurrency`` senders sends one message in a context
of its own and waits for the completed task before the next.

Run as ``.venv/bin/python bench/a2a_served.py [--messages N] [--concurrency 1,8,32] [--warmup N]``.
Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a2a.client import Client
from a2a.helpers import get_artifact_text, new_text_part
from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest, TaskState

from bench.a2a_reference import drive, measure_reference, reference_client
from bench.federation_parley import Receiver
from bench.figures import Figures

PARLEY, REFERENCE = "Parley A2A (SQLite, durable)", "a2a-sdk sample (in memory)"
AGENT = "echo"
SESSIONS = 64  # the agent's cap: every sender's context has its turn at once


@contextlib.contextmanager
def parley_a2a() -> Iterator[tuple[str, str, int]]:
    """A ``parley serve`` with one exposed agent; its A2A URL, a client's token, its pid."""
    with tempfile.TemporaryDirectory(prefix="parley-a2a-bench-") as folder:
        server = Receiver(Path(folder))
        server.start()
        try:
            server.cli("agent", "hire", AGENT, "--node", "local", "--max-sessions", str(SESSIONS))
            server.cli("a2a", "expose", AGENT)
            token = json.loads(server.cli("a2a", "client", "add", "bench", "--json"))["token"]
            assert server.process is not None  # started above
            yield f"http://127.0.0.1:{server.port}/a2a/{AGENT}", token, server.process.pid
        finally:
            server.stop()


async def send_one(client: Client, text: str) -> float:
    """One message, answered with its task completed; the seconds it took."""
    message = Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        context_id=uuid.uuid4().hex,
        parts=[new_text_part(text)],
    )
    started = time.perf_counter()
    answers = [answer async for answer in client.send_message(SendMessageRequest(message=message))]
    took = time.perf_counter() - started
    task = answers[-1].task
    if task.status.state != TaskState.TASK_STATE_COMPLETED or text not in get_artifact_text(
        task.artifacts[0]
    ):
        raise RuntimeError(f"Parley did not answer {text!r}: {answers[-1]}")
    return took


async def measure_parley(
    messages: int,
    concurrency: int,
    warmup: int = 50,
    served: tuple[str, str, int] | None = None,
) -> Figures:
    """Figures of ``messages`` sends to a Parley (``served``: one already running), after
    ``warmup`` unmeasured ones."""
    if served is None:
        with parley_a2a() as started:
            return await measure_parley(messages, concurrency, warmup, started)
    url, token, pid = served
    async with reference_client(url, concurrency, token) as client:
        if warmup:
            await drive(client, warmup, min(concurrency, warmup), send_one)
        return await drive(client, messages, concurrency, send_one, server_pid=pid)


async def main(args: argparse.Namespace) -> int:
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    rows: list[tuple[str, Figures]] = []
    with parley_a2a() as served:
        for concurrency in concurrencies:
            _progress(f"{PARLEY}: {args.messages} messages at concurrency {concurrency}…")
            rows.append(
                (PARLEY, await measure_parley(args.messages, concurrency, args.warmup, served))
            )
            _progress(f"{REFERENCE}: {args.messages} messages at concurrency {concurrency}…")
            rows.append(
                (REFERENCE, await measure_reference(args.messages, concurrency, args.warmup))
            )
    report(rows, args.messages)
    return 0


def report(rows: list[tuple[str, Figures]], messages: int) -> None:
    print(f"\n## SendMessage on loopback, {messages} measured messages per line\n")
    print("| server | concurrency | msgs/s | p50 ms | p99 ms | server CPU ms/msg | vs reference |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    reference = {f.concurrency: f for name, f in rows if name == REFERENCE}
    for name, figures in rows:
        base = reference.get(figures.concurrency)
        ratio = ""
        if name == PARLEY and base:
            rate, p50 = figures.per_second / base.per_second, figures.p50_ms / base.p50_ms
            ratio = f"{rate:.2f}x, p50 {p50:.2f}x"
            if figures.server_cpu_ms and base.server_cpu_ms:
                ratio += f", CPU {figures.server_cpu_ms / base.server_cpu_ms:.2f}x"
        cpu = "" if figures.server_cpu_ms is None else f"{figures.server_cpu_ms:.2f}"
        print(
            f"| {name} | {figures.concurrency} | {figures.per_second:.0f} |"
            f" {figures.p50_ms:.2f} | {figures.p99_ms:.2f} | {cpu} | {ratio} |"
        )
    best = {
        side: max((f for name, f in rows if name == side), key=lambda f: f.per_second)
        for side in (PARLEY, REFERENCE)
        if any(name == side for name, _ in rows)
    }
    if len(best) == 2:
        ours, theirs = best[PARLEY], best[REFERENCE]
        print(
            f"\nbest vs best: {ours.per_second:.0f} msgs/s (concurrency {ours.concurrency}) against"
            f" {theirs.per_second:.0f} (concurrency {theirs.concurrency}):"
            f" {ours.per_second / theirs.per_second:.2f}x"
        )


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000, help="measured messages per line")
    parser.add_argument("--concurrency", default="1,8,32", help="senders at once, one line each")
    parser.add_argument("--warmup", type=int, default=50, help="unmeasured messages first")
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(_arguments())))
