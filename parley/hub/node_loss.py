"""A node lost to silence took its turns with it: its running runs fail with reason
``node_lost`` and their text waits for the agent's next run (on that node once it is back, or on
another after a reassign). The hub's own node is never lost this way: its turns run in the hub's
process, which is alive if this runs."""

from __future__ import annotations

import logging

from parley.clock import Clock
from parley.hub.scheduler import Scheduler
from parley.mesh.liveness import NodeLost
from parley.runs.recovery import fail_lost_node
from parley.store import Store
from parley.store.contention import retried

log = logging.getLogger(__name__)


def failing_lost_turns(
    store: Store, clock: Clock, scheduler: Scheduler, own_node: str | None
) -> NodeLost:
    """Until the node is heard again (``scheduler.node_back``), nothing starts there."""

    async def on_lost(node: str) -> None:
        if node == own_node:
            return
        scheduler.node_lost(node)  # first: the failed runs' text is queued again below
        failed = await retried(store, lambda tx: fail_lost_node(tx, clock, node))
        if failed:
            log.info("node %s lost with %d running turn(s): failed as node_lost", node, failed)

    return on_lost
