"""Trying a piece of work again while what it needs is away: doubling pauses from a first to a
longest, a warning each time saying what failed, for ever or until a deadline. The one shape
every such loop shares; each caller keeps its own pauses."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from parley.errors import ParleyError, Unavailable

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

log = logging.getLogger(__name__)


async def retrying(
    attempt: Callable[[], Awaitable[T]],
    *,
    what: str,
    first: float,
    longest: float,
    on: tuple[type[BaseException], ...] = (Unavailable,),
    within: float | None = None,
    sleep: Sleep = asyncio.sleep,
    logger: logging.Logger = log,
    level: int = logging.WARNING,
    traceback: bool = False,
) -> T:
    """``attempt()``'s result, tried again after each failure of a kind in ``on``; the
    failure itself once ``within`` seconds (if given) have passed since the first try.
    ``traceback``: each failure logged with where it came from (a bug, not an outage)."""
    give_up_at = None if within is None else time.monotonic() + within
    pause = first
    while True:
        try:
            return await attempt()
        except on as exc:
            if give_up_at is not None and time.monotonic() + pause > give_up_at:
                raise
            logger.log(
                level,
                "%s: %s; again in %.2fs",
                what,
                _why(exc),
                pause,
                exc_info=exc if traceback else None,
            )
        await sleep(pause)
        pause = min(pause * 2, longest)


def _why(exc: BaseException) -> str:
    return exc.message if isinstance(exc, ParleyError) else str(exc) or type(exc).__name__
