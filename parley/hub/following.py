"""Following one run as it goes, for each who streams one (the API's ``/runs/ID/events``, an A2A
task's stream or subscription): its watch is subscribed to before the run is read, so that no
end slips between; then come its events in order (what came before the follower is replayed
first) until it ends, when the run is read again whole."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager

from parley.hub.watch import RunWatch, WatchEvent
from parley.runs.model import Run
from parley.store import Store

# Subscribes a callback to the refusals told in a root, for as long as it is entered.
Refusals = Callable[[Callable[[str], None]], contextlib.AbstractContextManager[None]]


class Following:
    """A run being followed: ``run`` as last read; ``events`` until it ends."""

    def __init__(
        self, store: Store, run_id: int, queue: asyncio.Queue[WatchEvent], run: Run
    ) -> None:
        self._store, self._run_id, self._queue = store, run_id, queue
        self.run = run

    async def events(self) -> AsyncGenerator[WatchEvent]:
        """Each event of the open run but its end ("state", "chunk", "tool", "approval", and
        "refusal" if asked for); at its end ``run`` is read again, and this stops."""
        while self.run.is_open:
            event = await self._queue.get()
            if event.kind == "end":
                self.run = await run_now(self._store, self._run_id)
            else:
                yield event


@asynccontextmanager
async def following(
    store: Store, watch: RunWatch, run_id: int, refusals: Refusals | None = None
) -> AsyncIterator[Following]:
    """Follow ``run_id``; with ``refusals`` (a root's, ``TopicWatch.refusals``), the refusals
    told in that root meanwhile come as events too."""
    with watch.watching(run_id) as queue:
        told = (
            contextlib.nullcontext()
            if refusals is None
            else refusals(lambda notice: queue.put_nowait(WatchEvent("refusal", notice)))
        )
        with told:
            yield Following(store, run_id, queue, await run_now(store, run_id))


async def run_now(store: Store, run_id: int) -> Run:
    async with store.transaction() as tx:
        run = await tx.runs.by_id(run_id)
    assert run is not None  # runs are never deleted
    return run
