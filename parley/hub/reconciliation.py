"""A hub back from a stop asks its nodes first: a turn a node still runs goes on (its outcome is
recorded when it comes). Then it records the turns' ends the broker kept for it (turns that
ended while it was down, or right after their node answered), and only the running runs that
are still running and that no node holds are ``interrupted``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from pydantic import ValidationError

from parley.broker.port import Broker
from parley.clock import Clock
from parley.errors import ParleyError
from parley.node.messages import HeldTurns, held_subject
from parley.runs.recovery import recover_interrupted
from parley.store import Store
from parley.store.contention import retried

log = logging.getLogger(__name__)

ASK_TIMEOUT = 2.0
# Seconds the kept ends may take to be recorded; past it, the hub goes on (and logs it).
CATCH_UP_TIMEOUT = 60.0


async def reconcile(
    store: Store, broker: Broker, clock: Clock, caught_up: Callable[[], Awaitable[None]]
) -> int:
    """Fail the running runs no node holds; the number failed. ``caught_up`` returns once the
    ends the broker stored so far are recorded: a node that no longer holds a turn had stored
    its end before it answered."""
    async with store.transaction() as tx:
        running = await tx.runs.running()
    nodes = sorted({run.node_name for run in running})
    answers = await asyncio.gather(*(_held_by(broker, node) for node in nodes))
    held_by = dict(zip(nodes, answers, strict=True))
    # A node vouches only for its own runs.
    held = {run.id for run in running if run.id in held_by[run.node_name]}
    if held:
        log.info("%d running turn(s) go on on their nodes: %s", len(held), sorted(held))
    try:
        await asyncio.wait_for(caught_up(), CATCH_UP_TIMEOUT)
    except TimeoutError:
        log.warning(
            "the turns' ends kept by the broker were not all recorded in %gs; turns no node"
            " holds are judged without them",
            CATCH_UP_TIMEOUT,
        )
    # While the ends kept by the broker are still being recorded, this may deadlock with them.
    return await retried(store, lambda tx: recover_interrupted(tx, clock, held))


async def _held_by(broker: Broker, node: str) -> set[int]:
    try:
        raw = await broker.request(held_subject(node), b"{}", ASK_TIMEOUT)
        return set(HeldTurns.model_validate_json(raw).run_ids)
    except (ParleyError, ValidationError) as exc:
        log.info("node %s holds no turns for this hub: %s", node, exc)
        return set()
