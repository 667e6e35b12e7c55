"""Helpers for agent tests: an agent busy with a turn (a running run on a task), and its end."""

from __future__ import annotations

import secrets

from parley.conversations.model import TopicKind
from parley.runs.model import RunState
from tests.support import Harness


async def give_work(parley: Harness, agent_name: str) -> int:
    """A run in progress for ``agent_name``, as if its node were working on a task."""
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        agent = await tx.agents.by_name(agent_name)
        assert agent is not None
        task = await tx.topics.insert(TopicKind.TASK, agent.id, now, text="busy work")
        session = await tx.runs.session(agent.id, task.id, now)
        run_id = await tx.runs.enqueue(agent.id, task.id, session.id, now)
        assert await tx.runs.start(run_id, secrets.token_hex(32), now)
        return run_id


async def finish_work(parley: Harness, run_id: int) -> None:
    async with parley.context.store.transaction() as tx:
        assert await tx.runs.finish(run_id, RunState.FINISHED, parley.clock.now())
