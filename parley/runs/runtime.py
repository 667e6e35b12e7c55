"""The hub's running parts for runs: the scheduler, the outbox worker, run watching, and what
happens after each commit (wake the scheduler, cancel stopped turns, make clones' workspaces)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from parley.agents.model import Agent
from parley.agents.workspaces import provision
from parley.clock import Clock
from parley.errors import ParleyError
from parley.mesh.broker import Broker
from parley.mesh.messages import StopTurn, stop_subject
from parley.runs.effects import Effects
from parley.runs.engine import RunEngine
from parley.runs.outbox import OutboxWorker
from parley.runs.recovery import recover_interrupted
from parley.runs.watch import RunWatch
from parley.store import Store, Tx

log = logging.getLogger(__name__)


class Runtime:
    def __init__(self, store: Store, broker: Broker, clock: Clock, parley_url: str) -> None:
        self.store, self.broker, self.clock = store, broker, clock
        self.watch = RunWatch()
        self.engine = RunEngine(store, broker, clock, parley_url, self.watch, self.settle)
        self.outbox = OutboxWorker(store, clock, self.settle)
        self._background: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        async with self.transaction() as tx:
            interrupted = await recover_interrupted(tx, self.clock)
        if interrupted:
            log.info(
                "%d run(s) were interrupted by the last stop; their text waits again", interrupted
            )
        await self.engine.start()
        await self.outbox.start()

    async def stop(self) -> None:
        await self.outbox.stop()
        await self.engine.stop()
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """A store transaction whose effects are acted on once it has committed."""
        async with self.store.transaction() as tx:
            yield tx
        await self.settle(tx.effects)

    async def settle(self, effects: Effects) -> None:
        if effects.wake:
            self.engine.wake()
        if effects.outbox:
            self.outbox.wake()
        for run in effects.stopped:
            self.watch.end(run.id, "stopped")
            await self._cancel_turn(run.node_name, run.id)
        for agent in effects.hired:
            self._in_background(self._provision(agent))

    async def node_ready(self) -> None:
        self.engine.wake()

    async def _cancel_turn(self, node: str, run_id: int) -> None:
        try:
            await self.broker.publish(
                stop_subject(node), StopTurn(run_id=run_id).model_dump_json().encode()
            )
        except ParleyError as exc:
            log.warning("could not tell node %s to stop run %s: %s", node, run_id, exc)

    async def _provision(self, agent: Agent) -> None:
        if await provision(self.store, self.broker, agent):
            self.engine.wake()

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
