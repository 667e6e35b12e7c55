"""The node side of ``parley node join``: reach the broker, join the hub's mesh, run this
machine's turns until SIGTERM or Ctrl-C (or until another join takes the name with
``--replace``), then leave cleanly (turns cancelled, clients closed)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path

from parley.broker.nats_broker import NatsBroker
from parley.broker.port import Broker
from parley.cli.event_loop import run_long_lived, started_for_good
from parley.errors import Conflict, Invalid, Unavailable
from parley.mesh.broker_auth import node_inbox_prefix, node_named_in
from parley.node.joining import joining
from parley.node.keys import NodeKey
from parley.node.runner import NodeRunner, new_instance
from parley.settings import Settings

log = logging.getLogger("parley")

RETRY_SECONDS = 2.0  # between tries to register while the hub does not answer


def run_node(
    settings: Settings, broker_url: str, creds: str, workspaces: Path, replace: bool
) -> None:
    """``creds``: the node's .creds text (its broker credentials, and its key)."""
    key = NodeKey.from_creds(creds)  # not credentials at all: said before anything starts
    named = node_named_in(creds)
    if named is not None and named != settings.node_name:
        raise Invalid(
            f"these credentials are node {named}'s, not {settings.node_name}'s: on the hub run"
            f" `parley node add {settings.node_name}` and join with the file it writes"
        )
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    with contextlib.suppress(KeyboardInterrupt):
        run_long_lived(_run(settings, broker_url, creds, key, workspaces, replace))


async def _run(
    settings: Settings, broker_url: str, creds: str, key: NodeKey, workspaces: Path, replace: bool
) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    broker = await NatsBroker.connect(
        broker_url,
        credentials=creds,
        inbox_prefix=node_inbox_prefix(settings.node_name),
        prepare_stream=False,  # the hub's to make: a node's credentials may not
    )
    try:
        await _serve_turns(settings, broker, key, workspaces, stopping, replace)
    finally:
        await broker.close()


async def _serve_turns(
    settings: Settings,
    broker: Broker,
    key: NodeKey,
    workspaces: Path,
    stopping: asyncio.Event,
    replace: bool,
) -> None:
    """Register (again and again while the hub does not answer: it may start later), then run
    turns until stopped. Credentials the hub refuses end it at once (Unauthorized), and so does a
    name another process holds (Conflict), or takes later."""
    waited = False
    instance = new_instance()  # every try is this process: a try the hub took is not another
    while not stopping.is_set():
        try:
            async with joining(
                settings, broker, key, workspaces, instance=instance, replace=replace
            ) as node:
                print(f"node {settings.node_name} joined the mesh", flush=True)
                started_for_good()
                await _stopped_or_taken_over(stopping, node)
                return
        except Unavailable as exc:
            if not waited:
                log.warning("the hub does not answer (%s); trying again", exc.message)
                waited = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), RETRY_SECONDS)


async def _stopped_or_taken_over(stopping: asyncio.Event, node: NodeRunner) -> None:
    waits = [asyncio.create_task(stopping.wait()), asyncio.create_task(node.taken_over.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
    if node.taken_by is not None:
        by = node.taken_by
        raise Conflict(
            f"node {node.name} was taken over by a join on host {by.hostname} (pid {by.pid});"
            " this one stops"
        )
