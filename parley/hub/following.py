"""Following one run as it goes, for each who streams one (the API's ``/runs/ID/events``, an A2A
task's stream or subscription): its watch is subscribed to before the run is read, so that no
end slips between; then come its events in order (what came before the follower is replayed
first) until it ends, when it is read again. What is read is the run alone, or more around it
(an A2A task: its texts and runs), in one transaction each time: a follower that needs more
than the run reads it with the run, not beside it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Generic, TypeVar

from parley.hub.watch import RunWatch, WatchEvent
from parley.runs.model import Run
from parley.store import Store, Tx

T = TypeVar("T")

# Subscribes a callback to the refusals told in a root, for as long as it is entered.
Refusals = Callable[[Callable[[str], None]], contextlib.AbstractContextManager[None]]


class Following(Generic[T]):
    """A run being followed: ``seen``, what was last read of it (``run``, the run in it);
    ``events`` until it ends."""

    def __init__(
        self,
        store: Store,
        queue: asyncio.Queue[WatchEvent],
        read: Callable[[Tx], Awaitable[T]],
        run_of: Callable[[T], Run],
        seen: T,
    ) -> None:
        self._store, self._queue, self._read, self._run_of = store, queue, read, run_of
        self.seen = seen

    @property
    def run(self) -> Run:
        return self._run_of(self.seen)

    async def events(self) -> AsyncGenerator[WatchEvent]:
        """Each event of the open run but its end ("state", "chunk", "tool", "approval", and
        "refusal" if asked for); at its end ``seen`` is read again, and this stops."""
        while self.run.is_open:
            event = await self._queue.get()
            if event.kind == "end":
                self.seen = await _read(self._store, self._read)
            else:
                yield event


@asynccontextmanager
async def following(
    store: Store, watch: RunWatch, run_id: int, refusals: Refusals | None = None
) -> AsyncIterator[Following[Run]]:
    """Follow ``run_id``, reading the run alone; with ``refusals`` (a root's,
    ``TopicWatch.refusals``), the refusals told in that root meanwhile come as events too."""

    async def read(tx: Tx) -> Run:
        run = await tx.runs.by_id(run_id)
        assert run is not None  # runs are never deleted
        return run

    async with following_read(store, watch, run_id, read, _itself, refusals) as follow:
        yield follow


@asynccontextmanager
async def following_read(
    store: Store,
    watch: RunWatch,
    run_id: int,
    read: Callable[[Tx], Awaitable[T]],
    run_of: Callable[[T], Run],
    refusals: Refusals | None = None,
) -> AsyncIterator[Following[T]]:
    """Follow ``run_id``, reading what ``read`` reads each time (``run_of``: the run in it)."""
    with watch.watching(run_id) as queue:
        told = (
            contextlib.nullcontext()
            if refusals is None
            else refusals(lambda notice: queue.put_nowait(WatchEvent("refusal", notice)))
        )
        with told:
            yield Following(store, queue, read, run_of, await _read(store, read))


async def _read(store: Store, read: Callable[[Tx], Awaitable[T]]) -> T:
    async with store.transaction() as tx:
        return await read(tx)


def _itself(run: Run) -> Run:
    return run
