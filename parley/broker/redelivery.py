"""A durable batch whose handler raised is handed over again, after a growing pause, until the
handler returns: the batch is acknowledged only then, and later messages wait behind it."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from parley.broker.port import Delivered, DurableHandler
from parley.retrying import retrying

log = logging.getLogger(__name__)

FIRST_PAUSE, LONGEST_PAUSE = 0.05, 5.0  # seconds


async def hand_over(handler: DurableHandler, batch: Sequence[Delivered], where: str) -> None:
    await retrying(
        lambda: handler(batch),
        what=f"the consumer of {where} failed; it gets the batch again",
        first=FIRST_PAUSE,
        longest=LONGEST_PAUSE,
        on=(Exception,),
        logger=log,
        level=logging.ERROR,
        traceback=True,
    )
