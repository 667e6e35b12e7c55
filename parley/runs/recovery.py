"""After a restart: a run that was running when the process died is failed with reason
``interrupted``, and its input is offered again to the next run of its session."""

from __future__ import annotations

from parley.clock import Clock
from parley.runs.model import RunChange, RunState
from parley.store import Tx

INTERRUPTED = "interrupted"


async def recover_interrupted(tx: Tx, clock: Clock) -> int:
    now = clock.now()
    interrupted = await tx.runs.running()
    for run in interrupted:
        await tx.runs.finish(run.id, RunState.FAILED, now, reason=INTERRUPTED)
        tx.effects.changed.append(RunChange(run, RunState.FAILED, now, INTERRUPTED))
        next_run = await tx.runs.queued_in_session(run.session_id)
        if next_run is None:
            next_run = await tx.runs.enqueue(run.agent_id, run.topic_id, run.session_id, now)
        await tx.messages.move_inputs(run.id, next_run)
    if interrupted:
        tx.effects.wake = True
    return len(interrupted)
