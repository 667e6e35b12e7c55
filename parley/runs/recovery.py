"""Runs whose turn is gone: a run that was running when the hub died and that no node still holds
is failed with reason ``interrupted``; the running runs of a node lost to silence are failed with
reason ``node_lost``. Either way, its input is offered again to the next run of its session."""

from __future__ import annotations

from collections.abc import Collection

from parley.clock import Clock
from parley.runs.model import INTERRUPTED, NODE_LOST, Run, RunChange, RunState
from parley.store import Tx


async def recover_interrupted(tx: Tx, clock: Clock, held: Collection[int] = ()) -> int:
    """Fail every running run but those a live node says it ``held`` (their turns go on)."""
    gone = [run for run in await tx.runs.running() if run.id not in held]
    return await fail_and_requeue(tx, clock, gone, INTERRUPTED)


async def fail_lost_node(tx: Tx, clock: Clock, node: str) -> int:
    """A node gone silent takes its turns with it; nothing of other nodes is touched."""
    lost = await tx.runs.running(node)
    return await fail_and_requeue(tx, clock, lost, NODE_LOST)


async def fail_and_requeue(tx: Tx, clock: Clock, gone: list[Run], reason: str) -> int:
    now = clock.now()
    failed = 0
    # Their roots first, in one order, as the recorder and a stop lock them before runs.
    topics = await tx.topics.by_ids({run.topic_id for run in gone})
    await tx.topics.lock({topic.root_id for topic in topics.values()})
    for run in gone:
        if not await tx.runs.finish(run.id, RunState.FAILED, now, reason=reason):
            continue  # its outcome was recorded meanwhile
        failed += 1
        tx.effects.changed.append(RunChange(run, RunState.FAILED, now, reason))
        next_run = await tx.runs.waiting_or_new(run.agent_id, run.topic_id, run.session_id, now)
        await tx.messages.move_inputs(run.id, next_run)
    if failed:
        tx.effects.wake = True
    return failed
