"""What a turn had said when it was stopped, failed or interrupted is kept: as its run's output
and as a reply in its topic marked cut short, so that people see it (the chat, `run show`,
`run follow`, the API) and the agent's next turn in that session reads it in its history. It
comes redacted and capped as the turn's stderr does; it is never sent on (not to the other
agent of an agent conversation, nor to a channel): it is a record, not an answer."""

from __future__ import annotations

from parley.clock import Clock
from parley.runs.model import Run
from parley.store import Tx

# How people are told that the reply they saw streaming was undone with the rest of its turn.
NOT_KEPT = "its reply was not kept"


async def keep_said_so_far(tx: Tx, clock: Clock, run: Run, said: str) -> None:
    """Keep ``said`` for ``run``, once: a second copy of its end, or a run that finished with
    a reply, keeps nothing more."""
    if not await tx.runs.keep_said(run.id, said):
        return
    await tx.messages.add(
        run.topic_id,
        "reply",
        said,
        clock.now(),
        author_agent_id=run.agent_id,
        from_run_id=run.id,
        cut_short=True,
    )
    tx.effects.cut_short.append(run.id)
