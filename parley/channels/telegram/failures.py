"""Telegram's failures in Parley's error tree, so that the outbox judges them: a flood limit
(``RetryAfter``, waited out for as long as Telegram asked), a network failure, a timeout, a server
error or a conflict is ``Unavailable`` (tried again); a refused token, a bot kicked or blocked, a
chat or topic Telegram does not know, a refused request is final."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from telegram import error

from parley.errors import Forbidden, Invalid, NotFound, ParleyError, Unauthorized, Unavailable

# What Telegram's 400 says when the place is gone (a topic deleted, a chat left, a root deleted).
GONE = (
    "message thread not found",
    "chat not found",
    "message to be replied not found",
    "topic_deleted",
    "topic_closed",
)


def retry_after_seconds(exc: error.RetryAfter) -> float:
    wait = exc.retry_after
    return float(wait if isinstance(wait, int | float) else wait.total_seconds())


def as_parley_error(exc: Exception) -> ParleyError:
    if isinstance(exc, ParleyError):
        return exc
    if isinstance(exc, error.RetryAfter):
        wait = retry_after_seconds(exc)
        return Unavailable(f"Telegram asked to wait {wait:g} s", retry_after_seconds=wait)
    if isinstance(exc, error.InvalidToken):
        return Unauthorized(
            "Telegram refused the bot's token (set a new one with 'parley channel account token')"
        )
    if isinstance(exc, error.Forbidden):
        return Forbidden(f"Telegram refused: {exc.message}")
    if isinstance(exc, error.BadRequest):
        if any(words in exc.message.lower() for words in GONE):
            return NotFound(f"Telegram does not know it: {exc.message}")
        return Invalid(f"Telegram refused the request: {exc.message}")
    if isinstance(exc, error.ChatMigrated):
        return NotFound(f"the group became supergroup {exc.new_chat_id}")
    if isinstance(exc, error.NetworkError | error.Conflict | error.TelegramError):
        return Unavailable(f"Telegram could not be reached: {exc.message}")
    if isinstance(exc, httpx.HTTPError | OSError | TimeoutError):
        return Unavailable(f"Telegram could not be reached: {type(exc).__name__}")
    raise exc


@asynccontextmanager
async def speaking_to_telegram() -> AsyncIterator[None]:
    """Raise what goes wrong inside as Parley's errors (unknown failures stay bugs)."""
    try:
        yield
    except (TimeoutError, error.TelegramError, httpx.HTTPError, OSError) as exc:
        raise as_parley_error(exc) from exc
