"""Slack's failures in Parley's error tree, so that the outbox judges them: a rate limit (with
how long Slack asked to wait), a server error, a dropped connection is ``Unavailable`` (tried
again); a refused token, a missing permission, an unknown channel or thread, a refused body
is final."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError

from parley.errors import Forbidden, Invalid, NotFound, ParleyError, Unauthorized, Unavailable

REFUSED_TOKEN = frozenset({"invalid_auth", "not_authed", "token_revoked", "token_expired",
                           "account_inactive", "not_allowed_token_type"})  # fmt: skip
GONE = frozenset({"channel_not_found", "thread_not_found", "is_archived", "message_not_found"})
FORBIDDEN = frozenset({"not_in_channel", "missing_scope", "restricted_action",
                       "ekm_access_denied", "team_access_not_granted"})  # fmt: skip
DEFAULT_RETRY_AFTER = 30.0  # seconds, when a 429 does not say (Slack's Tier 1 minute / 2)
TOO_MANY_REQUESTS = 429


def error_code(exc: SlackApiError) -> str:
    """Slack's ``error`` word ('' when the answer had none, as a 5xx page has not)."""
    data = exc.response.data
    return str(data.get("error") or "") if isinstance(data, dict) else ""


def retry_after(exc: SlackApiError) -> float | None:
    """Seconds Slack asked to wait (its Retry-After header), if the failure is a rate limit."""
    if exc.response.status_code != TOO_MANY_REQUESTS and error_code(exc) != "ratelimited":
        return None
    header = (exc.response.headers or {}).get("Retry-After")
    try:
        return max(0.0, float(header)) if header is not None else DEFAULT_RETRY_AFTER
    except ValueError:
        return DEFAULT_RETRY_AFTER


def as_parley_error(exc: Exception) -> ParleyError:
    if isinstance(exc, ParleyError):
        return exc
    if isinstance(exc, SlackApiError):
        return _api_error(exc)
    if isinstance(exc, SlackClientError | aiohttp.ClientError | OSError | asyncio.TimeoutError):
        return Unavailable(f"Slack could not be reached: {type(exc).__name__}")
    raise exc


def _api_error(exc: SlackApiError) -> ParleyError:
    code, status = error_code(exc), exc.response.status_code
    wait = retry_after(exc)
    if wait is not None:
        return Unavailable(f"Slack asked to wait {wait:g} s", retry_after_seconds=wait)
    if code in REFUSED_TOKEN or status == 401:
        return Unauthorized(f"Slack refused the token ({code}): set a new one with"
                            " 'parley channel account token'")  # fmt: skip
    if code in GONE or status == 404:
        return NotFound(f"Slack does not know it: {code or status}")
    if code in FORBIDDEN or status == 403:
        return Forbidden(f"Slack refused: {code or status}")
    if status >= 500 or code in ("internal_error", "fatal_error", "service_unavailable"):
        return Unavailable(f"Slack is away for a moment: {code or status}")
    return Invalid(f"Slack refused the request: {code or status}")


@asynccontextmanager
async def speaking_to_slack() -> AsyncIterator[None]:
    """Raise what goes wrong inside as Parley's errors (unknown failures stay bugs)."""
    try:
        yield
    except (TimeoutError, SlackClientError, aiohttp.ClientError, OSError) as exc:
        raise as_parley_error(exc) from exc
