"""Helpers for agent tests: give an agent work the way the runtime will (a queued run)."""

from __future__ import annotations

from tests.support import Harness


async def give_work(parley: Harness, agent_name: str) -> int:
    async with parley.context.store.transaction() as tx:
        agent = await tx.agents.by_name(agent_name)
        assert agent is not None
        return await tx.runs.enqueue(agent.id, parley.clock.now())


async def finish_work(parley: Harness, run_id: int) -> None:
    async with parley.context.store.transaction() as tx:
        assert await tx.runs.finish(run_id, "finished", parley.clock.now())
