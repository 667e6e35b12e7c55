"""Discord's failures in Parley's error tree, so that the outbox judges them: a server error, a
rate limit, a dropped or refused connection is ``Unavailable`` (tried again); a refused token,
a missing permission, an unknown channel or a refused body is final."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
import discord

from parley.errors import Forbidden, Invalid, NotFound, ParleyError, Unauthorized, Unavailable

UNAUTHORIZED = 401


def as_parley_error(exc: Exception) -> ParleyError:
    if isinstance(exc, ParleyError):
        return exc
    if isinstance(exc, discord.DiscordServerError | discord.RateLimited):
        return Unavailable(f"Discord is away for a moment: {exc}")
    if isinstance(exc, discord.Forbidden):
        return Forbidden(f"Discord refused: {exc.text or 'missing permissions'}")
    if isinstance(exc, discord.NotFound):
        return NotFound(f"Discord does not know it: {exc.text or 'unknown'}")
    if isinstance(exc, discord.HTTPException):
        if exc.status == UNAUTHORIZED:
            return Unauthorized("Discord refused the bot's token (set a new one with"
                                " 'parley channel account token')")  # fmt: skip
        if exc.status == 429 or exc.status >= 500:
            return Unavailable(f"Discord is away for a moment: {exc.status}")
        return Invalid(f"Discord refused the request: {exc.status} {exc.text}")
    if isinstance(exc, aiohttp.ClientError | OSError | asyncio.TimeoutError):
        return Unavailable(f"Discord could not be reached: {type(exc).__name__}")
    raise exc


@asynccontextmanager
async def speaking_to_discord() -> AsyncIterator[None]:
    """Raise what goes wrong inside as Parley's errors (unknown failures stay bugs)."""
    try:
        yield
    except (TimeoutError, discord.DiscordException, aiohttp.ClientError, OSError) as exc:
        raise as_parley_error(exc) from exc
