"""SQLite's log is checkpointed by the store's own thread, never by a commit on the loop."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from sqlalchemy import text

from parley.store import Store
from parley.store.checkpoints import Checkpointer
from parley.store.engine import LOG_LIMIT_BYTES
from tests.support import eventually

ROWS = 2000  # of ~2 KB: about 1000 pages of 4 KB, where SQLite would checkpoint by itself
LIMIT = 300  # pages of log past which the checkpoint empties it, in the steady writes' test


async def _write(store: Store, rows: int) -> None:
    async with store.transaction() as tx:
        await tx.connection.execute(text("CREATE TABLE IF NOT EXISTS scratch (body TEXT)"))
    for start in range(0, rows, 100):
        async with store.transaction() as tx:
            await tx.connection.execute(
                text("INSERT INTO scratch (body) VALUES (:body)"),
                [{"body": f"{n:06d}" * 340} for n in range(start, start + 100)],
            )


async def _without_its_checkpointer(database: Path) -> Store:
    """A store at ``database`` whose own checkpointer is stopped: only what the test does
    checkpoints its log."""
    store = await Store.open(f"sqlite:///{database}")
    assert store.checkpoints is not None
    await store.checkpoints.stop()
    return store


def _log_pages(database: Path) -> int:
    """The log file's size in pages: it grows until a checkpoint has copied it all, and then
    is written from its start again."""
    size = database.with_name(database.name + "-wal").stat().st_size
    return size // 4096


async def test_the_stores_commits_never_checkpoint(tmp_path: Path) -> None:
    database = tmp_path / "store.db"
    store = await _without_its_checkpointer(database)  # only commits from here on
    try:
        async with store.transaction() as tx:
            automatic = (await tx.connection.execute(text("PRAGMA wal_autocheckpoint"))).scalar()
        await _write(store, ROWS)
        # Past 1000 pages, an automatic checkpoint would have let the log start over.
        assert automatic == 0
        assert _log_pages(database) > 1100
    finally:
        await store.close()


async def test_a_checkpoint_copies_the_whole_log_and_the_log_starts_over(tmp_path: Path) -> None:
    database = tmp_path / "store.db"
    store = await _without_its_checkpointer(database)
    checkpoints = Checkpointer(database)
    try:
        await _write(store, ROWS)
        pages, copied = await checkpoints.checkpoint()
        assert pages > 1000 and copied == pages
        grown = _log_pages(database)
        await _write(store, 200)  # written from the log's start again: it does not grow
        assert _log_pages(database) == grown
    finally:
        await checkpoints.stop()
        await store.close()
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT count(*) FROM scratch").fetchone() == (ROWS + 200,)


async def test_the_store_checkpoints_by_itself_while_open(tmp_path: Path) -> None:
    database = tmp_path / "store.db"
    store = await _without_its_checkpointer(database)
    checkpoints = store.checkpoints = Checkpointer(database, every=0.05)
    await checkpoints.start()
    try:
        await _write(store, ROWS)
        grown = _log_pages(database)
        # A whole checkpoint after the writes (the one under way may have begun before they
        # ended), however slow the machine: the log is copied, and starts over.
        whole = checkpoints.passes + 2
        assert await eventually(lambda: _past(checkpoints, whole))
        await _write(store, 200)
        assert _log_pages(database) == grown
    finally:
        await store.close()


async def _past(checkpoints: Checkpointer, passes: int) -> bool:
    return checkpoints.passes >= passes


async def test_under_steady_writes_the_log_is_made_to_start_over(tmp_path: Path) -> None:
    """Commits that never pause land during each passive copy, so the log never starts over by
    itself: past its limit, the checkpoint makes it (the writer waits for that one), and the
    file is written over from its start rather than cut and grown again."""
    database = tmp_path / "store.db"
    store = await _without_its_checkpointer(database)
    checkpoints = store.checkpoints = Checkpointer(database, every=0.01, restart_pages=LIMIT)
    await checkpoints.start()
    try:
        async with store.transaction() as tx:
            await tx.connection.execute(text("CREATE TABLE scratch (body TEXT)"))
        first = _starts(database)
        written = emptied = 0
        while written < 8 * LIMIT or checkpoints.passes < 20:
            before = _log_pages(database)
            async with store.transaction() as tx:
                await tx.connection.execute(
                    text("INSERT INTO scratch (body) VALUES (:body)"), {"body": "x" * 6000}
                )
            written += 2  # a row of two pages, no fewer
            emptied += _log_pages(database) < before
            await asyncio.sleep(0)  # the checkpointer's pass ends on the loop
        # Started over, more than once, and never cut: the file written over from its start
        # stays shorter than all that was written (each commit wrote two pages or more). How
        # much shorter hangs on how often the checkpointer's thread got its turn.
        assert _starts(database) >= first + 2
        assert emptied == 0
        assert _log_pages(database) < written
    finally:
        await store.close()


def _starts(database: Path) -> int:
    """How many times the log has started over: its header's checkpoint sequence number."""
    with database.with_name(database.name + "-wal").open("rb") as log:
        return int.from_bytes(log.read(16)[12:16], "big")


async def test_a_log_a_burst_made_long_is_cut_back_when_it_starts_over(tmp_path: Path) -> None:
    database = tmp_path / "store.db"
    store = await _without_its_checkpointer(database)
    checkpoints = Checkpointer(database)
    try:
        async with store.transaction() as tx:
            limit = (await tx.connection.execute(text("PRAGMA journal_size_limit"))).scalar()
            await tx.connection.execute(text(f"PRAGMA journal_size_limit={400 * 4096}"))
        await _write(store, ROWS)  # about 1000 pages of log
        await checkpoints.checkpoint()
        await _write(store, 10)  # the log starts over, and is cut back to the limit
        assert limit == LOG_LIMIT_BYTES
        assert _log_pages(database) <= 400
    finally:
        await checkpoints.stop()
        await store.close()
