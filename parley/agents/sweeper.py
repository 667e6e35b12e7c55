"""The background sweep: expired clones start draining; drained agents retire."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from parley.agents.lifecycle import begin_draining, retire
from parley.clock import Clock
from parley.errors import Conflict
from parley.store import Store
from parley.worker import Worker

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    draining: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)


async def sweep_once(store: Store, clock: Clock) -> SweepReport:
    report = SweepReport()
    async with store.transaction() as tx:
        for agent in await tx.agents.expired_clones(clock.now()):
            await begin_draining(tx, agent, "clone lifetime ended")
            report.draining.append(agent.name)
    async with store.transaction() as tx:
        for agent in await tx.agents.drained():
            try:
                await retire(tx, clock, agent)
            except Conflict:
                continue  # work arrived in a topic it holds since the query; next sweep
            report.retired.append(agent.name)
    return report


class AgentSweeper(Worker):
    """Every ``interval`` seconds: clones whose lifetime ended start draining, drained agents
    retire."""

    def __init__(self, store: Store, clock: Clock, interval: float) -> None:
        super().__init__("the agents' sweep", every=interval, logger=log)
        self._store, self._clock = store, clock

    async def one_pass(self) -> float | None:
        report = await sweep_once(self._store, self._clock)
        if report.draining or report.retired:
            log.info("sweep: draining %s, retired %s", report.draining, report.retired)
        return None
