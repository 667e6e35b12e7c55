"""The a2a-sdk reference for bench/federation.py: the same one-way exchange through the A2A
reference implementation. Its server (JSON-RPC, an echo agent whose tasks live in the SDK's
in-memory task store) runs under uvicorn in a subprocess on a loopback port, so that its CPU is
not the client's; the SDK's client sends N messages with a chosen concurrency, each one
``message:send`` answered once the echo task is completed in the store.

Run alone as ``.venv/bin/python bench/a2a_reference.py [--messages N] [--concurrency C]``;
``--serve PORT`` is the subprocess.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers import get_artifact_text, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Role,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, TransportProtocol

from bench.cpu_use import process_seconds
from bench.figures import Figures
from bench.ports import free_port
from parley.tls import trusted

START_SECONDS = 60.0


class EchoExecutor(AgentExecutor):
    """Each message becomes a task (kept in the task store) completed with its text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.add_artifact([new_text_part(context.get_user_input())])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("an echo is over before it could be cancelled")


def agent_card(url: str) -> AgentCard:
    return AgentCard(
        name="echo",
        description="Answers each message with its own text",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=url, protocol_binding=TransportProtocol.JSONRPC, protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])],
    )


def serve(port: int) -> None:
    """The reference server, in the foreground (the subprocess's whole life)."""
    card = agent_card(f"http://127.0.0.1:{port}/")
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


@contextlib.contextmanager
def reference_server() -> Iterator[tuple[str, int]]:
    """The reference server in a subprocess of its own; its URL and pid while it runs."""
    port = free_port()
    root = str(Path(__file__).resolve().parent.parent)
    paths = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.a2a_reference", "--serve", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_up(server, url)
        yield url, server.pid
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _wait_until_up(server: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            stderr = server.stderr.read().decode() if server.stderr else ""
            raise RuntimeError(
                f"the a2a-sdk reference server exited with {server.returncode}: {stderr}"
            )
        try:
            card = httpx.get(url + AGENT_CARD_WELL_KNOWN_PATH, timeout=2, verify=trusted())
            if card.status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the a2a-sdk reference server did not answer within {START_SECONDS:.0f} s")


@contextlib.asynccontextmanager
async def reference_client(
    url: str, concurrency: int, token: str | None = None
) -> AsyncIterator[Client]:
    """a2a-sdk's client for the agent at ``url``, a pooled connection per sender (``token``:
    sent as bearer)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(limits=limits, timeout=60, headers=headers) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        client = await ClientFactory(config).create_from_url(url)
        try:
            yield client
        finally:
            await client.close()


async def send_one(client: Client, text: str) -> float:
    """Send one message; the seconds until the server answered with its completed echo."""
    message = Message(
        role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[new_text_part(text)]
    )
    started = time.perf_counter()
    answers = [answer async for answer in client.send_message(SendMessageRequest(message=message))]
    took = time.perf_counter() - started
    task = answers[-1].task
    if (
        task.status.state != TaskState.TASK_STATE_COMPLETED
        or get_artifact_text(task.artifacts[0]) != text
    ):
        raise RuntimeError(f"the reference did not echo {text!r}: {answers[-1]}")
    return took


async def drive(
    client: Client,
    messages: int,
    concurrency: int,
    one: Callable[[Client, str], Awaitable[float]] | None = None,
    server_pid: int | None = None,
) -> Figures:
    """``messages`` sends from ``concurrency`` senders, each waiting for its answer in turn
    (``one``: how one is sent and checked; the reference's echo by default; ``server_pid``:
    the server process whose CPU meanwhile is read, if given)."""
    numbers = iter(range(messages))
    latencies: list[float] = []
    sending = one or send_one

    async def sender() -> None:
        for n in numbers:
            latencies.append(await sending(client, f"message {n}"))

    cpu_before = 0.0 if server_pid is None else process_seconds(server_pid)
    started = time.perf_counter()
    await asyncio.gather(*(sender() for _ in range(concurrency)))
    seconds = time.perf_counter() - started
    cpu = None if server_pid is None else process_seconds(server_pid) - cpu_before
    return Figures.of(latencies, seconds, concurrency, cpu)


async def measure_reference(messages: int, concurrency: int, warmup: int = 50) -> Figures:
    """Figures of ``messages`` echoes through a fresh reference server, after ``warmup``
    unmeasured ones (connections opened, code paths warm)."""
    if messages < 1 or concurrency < 1 or warmup < 0:
        raise ValueError("messages and concurrency are at least 1, warmup at least 0")
    with reference_server() as (url, pid):
        async with reference_client(url, concurrency) as client:
            if warmup:
                await drive(client, warmup, min(concurrency, warmup))
            return await drive(client, messages, concurrency, server_pid=pid)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    arguments = _arguments()
    if arguments.serve:
        serve(arguments.serve)
    else:
        figures = asyncio.run(
            measure_reference(arguments.messages, arguments.concurrency, arguments.warmup)
        )
        print(
            f"a2a-sdk reference: {figures.messages} messages, concurrency {figures.concurrency}:"
            f" {figures.per_second:.0f} msgs/s, p50 {figures.p50_ms:.2f} ms,"
            f" p99 {figures.p99_ms:.2f} ms"
        )
