"""Run rows, as far as the foundation needs them: whether an agent is idle."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from parley.store.tables import runs

OPEN_STATES = ("queued", "running")


class RunsRepo:
    def __init__(self, connection: AsyncConnection) -> None:
        self._c = connection

    async def enqueue(self, agent_id: int, now: datetime) -> int:
        result = await self._c.execute(
            insert(runs)
            .values(agent_id=agent_id, state="queued", created_at=now)
            .returning(runs.c.id)
        )
        return int(result.scalar_one())

    async def count_open(self, agent_id: int) -> int:
        query = (
            select(func.count())
            .select_from(runs)
            .where(runs.c.agent_id == agent_id, runs.c.state.in_(OPEN_STATES))
        )
        return int((await self._c.execute(query)).scalar_one())

    async def finish(self, run_id: int, state: str, now: datetime) -> bool:
        """Move an open run to a final state; a run already final stays as it is."""
        result = await self._c.execute(
            update(runs)
            .where(runs.c.id == run_id, runs.c.state.in_(OPEN_STATES))
            .values(state=state, finished_at=now)
        )
        return result.rowcount == 1

    async def stop_all_open(self, agent_id: int, now: datetime) -> int:
        result = await self._c.execute(
            update(runs)
            .where(runs.c.agent_id == agent_id, runs.c.state.in_(OPEN_STATES))
            .values(state="stopped", finished_at=now)
        )
        return int(result.rowcount)
