"""SQLite's write-ahead log is copied back into the database (a checkpoint) on a thread, once a
second, by a connection of its own. Left to SQLite, the commit that takes the log past 1000
pages runs the checkpoint and its fsync itself, and our commits run on the event loop: at 256
federation lanes that cost the receiving side 10-20% of its messages/s (bench/federation.py).
A passive checkpoint waits for no one: it copies what no reader still needs, and the log
starts over once all of it is copied. The store's own connections never checkpoint
(``wal_autocheckpoint=0``, see engine.py); the last connection to close a database still does,
as SQLite always does, so a command that opens the store briefly leaves no log behind."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)

EVERY_SECONDS = 1.0
BUSY_TIMEOUT_SECONDS = 30.0


class Checkpointer:
    def __init__(self, database: Path, every: float = EVERY_SECONDS) -> None:
        self._database, self._every = database, every
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._connection: sqlite3.Connection | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="sqlite-checkpoints")

    async def stop(self) -> None:
        """A last checkpoint (or the one under way: its thread cannot be cancelled), then
        close."""
        self._stopping.set()
        if self._task is not None:
            await self._task
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def checkpoint(self) -> tuple[int, int]:
        """One passive checkpoint now: the log's pages, and how many of them are copied."""
        return await asyncio.to_thread(self._checkpoint)

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self._every)
            try:
                await self.checkpoint()
            except sqlite3.Error as exc:  # a busy or full disk: the log waits for the next one
                log.warning("checkpointing the store failed, again in %ss: %s", self._every, exc)

    def _checkpoint(self) -> tuple[int, int]:
        if self._connection is None:
            self._connection = sqlite3.connect(
                self._database, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False
            )
        _busy, pages, copied = self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(pages), int(copied)
