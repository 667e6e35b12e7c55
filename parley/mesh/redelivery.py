"""A durable batch whose handler raised is handed over again, after a growing pause, until the
handler returns: the batch is acknowledged only then, and later messages wait behind it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from parley.mesh.broker import DurableHandler

log = logging.getLogger(__name__)

FIRST_PAUSE, LONGEST_PAUSE = 0.05, 5.0  # seconds


async def hand_over(
    handler: DurableHandler,
    batch: Sequence[bytes],
    where: str,
    still_working: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """``still_working`` is called before each new try (NATS: keeps the batch from being
    redelivered elsewhere while this process still retries it)."""
    pause = FIRST_PAUSE
    while True:
        try:
            await handler(batch)
            return
        except Exception:
            log.exception("the consumer of %s failed; it gets the batch again", where)
        await asyncio.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)
        if still_working is not None:
            await still_working()
