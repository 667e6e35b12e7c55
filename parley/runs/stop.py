"""Stopping runs: the turn is cancelled, its input counts as handled, the session is kept and
told at its next turn. Idempotent, and a late 'finished' never overwrites 'stopped'."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from parley.runs.model import Run, RunChange, RunState
from parley.store import Tx


async def stop_runs(tx: Tx, runs: Sequence[Run], now: datetime, reason: str) -> list[Run]:
    """Stop those of ``runs`` still open; returns the ones this call stopped."""
    stopped = []
    for run in runs:
        if not await tx.runs.stop(run.id, run.session_id, now, reason):
            continue  # already final: stopping again changes nothing
        stopped.append(run)
        tx.effects.changed.append(RunChange(run, RunState.STOPPED, now, reason))
    if stopped:
        tx.effects.stopped.extend(stopped)
        tx.effects.freed = True
    return stopped


async def stop_topics(tx: Tx, topic_ids: Sequence[int], now: datetime, reason: str) -> list[Run]:
    """Stop every open run working in ``topic_ids``, and the tasks of A2A agents that their
    texts started (cancelled there by the federation's follower, ``a2a_tasks.py``)."""
    if await tx.remote_tasks.cancel_in_topics(topic_ids):
        tx.effects.remote_tasks = True
    return await stop_runs(tx, await tx.runs.open_in_topics(topic_ids), now, reason)
