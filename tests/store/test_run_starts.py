"""Starting a batch of runs (the scheduler's): one statement on PostgreSQL, each run with its
own token's hash, and only runs still queued start."""

from __future__ import annotations

from parley.runs.model import RunState
from tests.agents.support import queue_task
from tests.support import Harness


async def test_a_batch_starts_the_queued_runs_each_with_its_own_token(parley: Harness) -> None:
    await parley.hire("scribe", max_sessions=8)
    now = parley.clock.now()
    # Queued and started in one transaction: the hub's scheduler never sees them queued.
    async with parley.context.store.transaction() as tx:
        queued = [await queue_task(tx, "scribe", now, f"work {n}") for n in range(3)]
        first, second, third = queued
        assert await tx.runs.start_many({first: "hash-first"}, now)
        missing = third + 100
        hashes = {first: "again", second: "hash-second", third: "hash-third", missing: "none"}
        started = await tx.runs.start_many(hashes, now)
        runs = await tx.runs.by_ids(queued)
    assert set(started) == {second, third}  # the running one and the missing one are not
    assert started[second] == runs[second]  # as they are now: running, with the token's hash
    assert {run_id: runs[run_id].token_hash for run_id in queued} == {
        first: "hash-first",
        second: "hash-second",
        third: "hash-third",
    }
    assert {runs[run_id].state for run_id in queued} == {RunState.RUNNING}
    assert runs[second].started_at == now


async def test_a_batch_of_none_starts_nothing(parley: Harness) -> None:
    async with parley.context.store.transaction() as tx:
        assert await tx.runs.start_many({}, parley.clock.now()) == {}
