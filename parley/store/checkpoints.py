"""SQLite's write-ahead log is copied back into the database (a checkpoint) on a thread, once a
second, by a connection of its own. Left to SQLite, the commit that takes the log past 1000
pages runs the checkpoint and its fsync itself, and our commits run on the event loop: at 256
federation lanes that cost the receiving side 10-20% of its messages/s (bench/federation.py).
A passive checkpoint waits for no one: it copies what no reader still needs, and the log
starts over once all of it is copied. Under steady writes it never is: a commit lands while the
copy runs, and the log grew by ~130 KB per A2A message for as long as they came (73 MB after
550). Past ``restart_pages`` the checkpoint that follows the passive one waits for the writer
and makes the log start over from its first page; the passive one has just copied nearly all
of it, so the writer waits a few milliseconds. The file is written over from its start, not
cut to nothing: emptied (TRUNCATE), the next commits grew it again block by block, and the
writers' wait took 15-25 ms a second at 16 ping-pong pairs (the hops' p99 28 ms, against 13 ms
written over; bench/runtime.py). The store's connections cut a log left longer than
``engine.LOG_LIMIT_BYTES`` by a burst back to that size when it starts over. The store's own
connections never checkpoint (``wal_autocheckpoint=0``, see engine.py); the last connection to
close a database still does, as SQLite always does, so a command that opens the store briefly
leaves no log behind."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

from parley.worker import Worker

log = logging.getLogger(__name__)

EVERY_SECONDS = 1.0
PAGE_BYTES = 4096  # SQLite's default page size, which the store keeps
RESTART_PAGES = 4096  # 16 MB of pages: what the log may hold before it is made to start over
BUSY_TIMEOUT_SECONDS = 30.0


class Checkpointer(Worker):
    def __init__(
        self, database: Path, every: float = EVERY_SECONDS, restart_pages: int = RESTART_PAGES
    ) -> None:
        super().__init__("sqlite-checkpoints", every=every, logger=log)
        self._database, self._restart_pages = database, restart_pages
        self._connection: sqlite3.Connection | None = None
        # The checkpoint on its thread: a thread cannot be cancelled, so stopping waits for it.
        self._under_way: asyncio.Future[tuple[int, int]] | None = None

    async def stop(self) -> None:
        """A last checkpoint (or the one under way: its thread cannot be cancelled), then
        close."""
        was_running = self.running
        await super().stop()
        if was_running:
            under_way = self._under_way
            await self._warned(under_way if under_way and not under_way.done() else None)
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def checkpoint(self) -> tuple[int, int]:
        """One passive checkpoint now (and one that empties the log, if it is past
        ``restart_pages``): the log's pages, and how many of them are copied."""
        return await asyncio.to_thread(self._checkpoint)

    async def one_pass(self) -> float | None:
        self._under_way = asyncio.ensure_future(self.checkpoint())
        await self._warned(asyncio.shield(self._under_way))
        return None  # the next one ``every`` seconds on

    async def _warned(self, checkpoint: asyncio.Future[tuple[int, int]] | None) -> None:
        """``checkpoint`` (a new one if None) seen through; a busy or full disk only warned of:
        the log waits for the next one."""
        try:
            await (checkpoint if checkpoint is not None else self.checkpoint())
        except sqlite3.Error as exc:
            log.warning("checkpointing the store failed, again in %ss: %s", self._every, exc)

    def _checkpoint(self) -> tuple[int, int]:
        if self._connection is None:
            self._connection = sqlite3.connect(
                self._database, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False
            )
        _busy, pages, copied = self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if pages > self._restart_pages:
            _busy, pages, copied = self._connection.execute(
                "PRAGMA wal_checkpoint(RESTART)"
            ).fetchone()
        return int(pages), int(copied)
