"""Helpers for agent tests: a run queued on a task, an agent busy with a turn (a running run on
a task), and its end."""

from __future__ import annotations

import secrets
from datetime import datetime

from parley.conversations.model import TopicKind
from parley.runs.model import RunState
from parley.store import Tx
from tests.support import Harness


async def queue_task(tx: Tx, agent_name: str, now: datetime, text: str) -> int:
    """A run queued for ``agent_name`` on a new task of ``text``."""
    agent = await tx.agents.by_name(agent_name)
    assert agent is not None
    task = await tx.topics.insert(TopicKind.TASK, agent.id, now, text=text)
    session = await tx.runs.session(agent.id, task.id, now)
    return await tx.runs.enqueue(agent.id, task.id, session.id, now)


async def give_work(parley: Harness, agent_name: str) -> int:
    """A run in progress for ``agent_name``, as if its node were working on a task."""
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        run_id = await queue_task(tx, agent_name, now, "busy work")
        assert await tx.runs.start_many({run_id: secrets.token_hex(32)}, now)
        return run_id


async def finish_work(parley: Harness, run_id: int) -> None:
    async with parley.context.store.transaction() as tx:
        assert await tx.runs.finish(run_id, RunState.FINISHED, parley.clock.now())
