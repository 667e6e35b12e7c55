"""The background sweep: expired clones start draining; drained agents retire."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from parley.agents.lifecycle import begin_draining, retire
from parley.clock import Clock
from parley.errors import Conflict
from parley.store import Store

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


async def run_sweeper(store: Store, clock: Clock, interval: float) -> None:
    while True:
        try:
            report = await sweep_once(store, clock)
            if report.draining or report.retired:
                log.info("sweep: draining %s, retired %s", report.draining, report.retired)
        except Exception:
            log.exception("sweep failed; trying again next round")
        await asyncio.sleep(interval)
