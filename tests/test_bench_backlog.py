"""bench/backlog.py's smoke test, small and without timing thresholds: it fills a store with a
backlog behind one agent, takes its slot, and times both reads."""

from __future__ import annotations

from bench.backlog import measure


async def test_the_backlog_bench_reads_with_the_slot_taken_and_free() -> None:
    taken, free = await measure("sqlite", backlog=30, repeat=2)
    assert taken > 0 and free > 0
