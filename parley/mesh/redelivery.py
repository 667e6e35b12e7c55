"""A durable batch whose handler raised is handed over again, after a growing pause, until the
handler returns: the batch is acknowledged only then, and later messages wait behind it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from parley.mesh.broker import Delivered, DurableHandler

log = logging.getLogger(__name__)

FIRST_PAUSE, LONGEST_PAUSE = 0.05, 5.0  # seconds


async def hand_over(handler: DurableHandler, batch: Sequence[Delivered], where: str) -> None:
    pause = FIRST_PAUSE
    while True:
        try:
            await handler(batch)
            return
        except Exception:
            log.exception("the consumer of %s failed; it gets the batch again", where)
        await asyncio.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)
