"""A hub back from a stop asks its nodes first: a turn a node still runs goes on (its outcome is
recorded when it comes), and only the running runs that no node holds are ``interrupted``."""

from __future__ import annotations

import asyncio
import logging

from pydantic import ValidationError

from parley.clock import Clock
from parley.errors import ParleyError
from parley.mesh.broker import Broker
from parley.mesh.messages import HeldTurns, held_subject
from parley.runs.recovery import recover_interrupted
from parley.store import Store

log = logging.getLogger(__name__)

ASK_TIMEOUT = 2.0


async def reconcile(store: Store, broker: Broker, clock: Clock) -> int:
    """Fail the running runs no node holds; the number failed. Call it once the hub hears run
    events, so that a held turn ending right after its node answered is not missed."""
    async with store.transaction() as tx:
        running = await tx.runs.running()
    nodes = sorted({run.node_name for run in running})
    answers = await asyncio.gather(*(_held_by(broker, node) for node in nodes))
    held_by = dict(zip(nodes, answers, strict=True))
    # A node vouches only for its own runs.
    held = {run.id for run in running if run.id in held_by[run.node_name]}
    if held:
        log.info("%d running turn(s) go on on their nodes: %s", len(held), sorted(held))
    async with store.transaction() as tx:
        return await recover_interrupted(tx, clock, held)


async def _held_by(broker: Broker, node: str) -> set[int]:
    try:
        raw = await broker.request(held_subject(node), b"{}", ASK_TIMEOUT)
        return set(HeldTurns.model_validate_json(raw).run_ids)
    except (ParleyError, ValidationError) as exc:
        log.info("node %s holds no turns for this hub: %s", node, exc)
        return set()
