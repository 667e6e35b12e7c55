"""Recording how turns ended, as nodes report them: every outcome that arrived meanwhile in one
transaction (group commit). A turn whose deferred actions are refused is recorded as failed,
with none of its actions, without failing the others of its batch."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from parley.clock import Clock
from parley.hub.outcomes import ActionsRefused, record_loaded_outcome
from parley.mesh.messages import RunEvent
from parley.store import Store

log = logging.getLogger(__name__)

BATCH = 256


class OutcomeRecorder:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store, self._clock = store, clock
        self._outcomes: asyncio.Queue[RunEvent] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def put(self, event: RunEvent) -> None:
        self._outcomes.put_nowait(event)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            batch = [await self._outcomes.get()]
            while not self._outcomes.empty() and len(batch) < BATCH:
                batch.append(self._outcomes.get_nowait())
            try:
                await self._record_refusing(batch)
            except Exception:  # one bad outcome must not lose the others: record them alone
                log.exception("recording %d outcomes together failed; one by one", len(batch))
                for event in batch:
                    with contextlib.suppress(Exception):
                        await self._record_refusing([event])

    async def _record_refusing(self, batch: list[RunEvent]) -> None:
        """Record a batch; a turn whose deferred actions were refused rolls the batch back and
        is recorded, on the next try, as failed without any of its actions."""
        refused: dict[int, str] = {}
        while True:
            try:
                await self._record(batch, refused)
                return
            except ActionsRefused as exc:
                if exc.run_id in refused:
                    raise
                refused[exc.run_id] = exc.message

    async def _record(self, batch: list[RunEvent], refused: dict[int, str]) -> None:
        async with self._store.transaction() as tx:
            runs = await tx.runs.by_ids([event.run_id for event in batch])
            topics = await tx.topics.by_ids({run.topic_id for run in runs.values()})
            for event in batch:
                run = runs.get(event.run_id)
                await record_loaded_outcome(
                    tx,
                    self._clock,
                    run,
                    topics.get(run.topic_id) if run else None,
                    event.kind == "finished" and event.run_id not in refused,
                    refused.get(event.run_id, event.text),
                    event.brain_session_id,
                    () if event.run_id in refused else event.actions,
                    event.run_token,
                )
