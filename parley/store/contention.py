"""Work the store may give up to let a concurrent transaction through (``Contended``: a
PostgreSQL deadlock or serialization conflict). Nothing of it was kept, so the same work runs
again, in a new transaction, a few times before the error is the caller's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from parley.errors import Contended
from parley.store.store import Store, Tx

log = logging.getLogger(__name__)

T = TypeVar("T")
TRIES = 5
PAUSE_SECONDS = 0.05  # before the second try; one more of it before each later one


async def retried(store: Store, work: Callable[[Tx], Awaitable[T]], tries: int = TRIES) -> T:
    """``work`` in a transaction of its own, run again while the store gives it up."""
    for attempt in range(1, tries + 1):
        try:
            async with store.transaction() as tx:
                return await work(tx)
        except Contended as exc:
            if attempt == tries:
                raise
            log.info("a transaction gave way to a concurrent one (%s); again", exc.message)
            await asyncio.sleep(PAUSE_SECONDS * attempt)
    raise AssertionError("not reached: the last try returns or raises")
