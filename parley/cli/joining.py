"""The node side of ``parley node join``: reach the broker, join the hub's mesh, run this
machine's turns until SIGTERM or Ctrl-C, then leave cleanly (turns cancelled, clients closed)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path

from parley.cli.event_loop import run_long_lived
from parley.errors import Unavailable
from parley.mesh.broker import Broker
from parley.mesh.nats_broker import NatsBroker
from parley.settings import Settings
from parley.startup import joining

log = logging.getLogger("parley")

RETRY_SECONDS = 2.0  # between tries to register while the hub does not answer


def run_node(settings: Settings, broker_url: str, join_token: str, workspaces: Path) -> None:
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    with contextlib.suppress(KeyboardInterrupt):
        run_long_lived(_run(settings, broker_url, join_token, workspaces))


async def _run(settings: Settings, broker_url: str, join_token: str, workspaces: Path) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    broker = await NatsBroker.connect(broker_url)
    try:
        await _serve_turns(settings, broker, join_token, workspaces, stopping)
    finally:
        await broker.close()


async def _serve_turns(
    settings: Settings,
    broker: Broker,
    join_token: str,
    workspaces: Path,
    stopping: asyncio.Event,
) -> None:
    """Register (again and again while the hub does not answer: it may start later), then run
    turns until stopped. A refused join token ends it at once (Unauthorized)."""
    waited = False
    while not stopping.is_set():
        try:
            async with joining(settings, broker, join_token, workspaces):
                print(f"node {settings.node_name} joined the mesh", flush=True)
                await stopping.wait()
                return
        except Unavailable as exc:
            if not waited:
                log.warning("the hub does not answer (%s); trying again", exc.message)
                waited = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), RETRY_SECONDS)
