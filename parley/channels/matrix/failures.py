"""Matrix's failures in Parley's error tree, so that the outbox judges them: a rate limit
(``M_LIMIT_EXCEEDED``, its ``retry_after_ms`` kept), a server error, a dropped connection is
``Unavailable`` (tried again, no sooner than asked); a refused token (401, ``M_UNKNOWN_TOKEN``),
a refusal (403, ``M_FORBIDDEN``: not in the room), an unknown room or event (404) or a refused
body is final.

mautrix turns an error answer into an exception without its body's ``retry_after_ms``: the
HTTP layer here reads it first (``MatrixHTTP``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from aiohttp import ClientResponse
from mautrix.api import HTTPAPI, Method
from mautrix.errors import (
    MatrixConnectionError,
    MatrixError,
    MatrixInvalidToken,
    MatrixRequestError,
    MatrixResponseError,
    make_request_error,
)
from yarl import URL

from parley.errors import Forbidden, Invalid, NotFound, ParleyError, Unauthorized, Unavailable

TOO_MANY = 429
DEFAULT_WAIT = 1.0  # seconds, when a 429 says not how long


class RateLimited(MatrixError):
    """The homeserver asked to be left alone for ``seconds``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"rate limited for {seconds:g} s")
        self.seconds = seconds


class MatrixHTTP(HTTPAPI):
    """mautrix's request sender, with a 429's wait read from its answer."""

    async def _send(
        self,
        method: Method,
        url: URL,
        content: Any,
        query_params: dict[str, str],
        headers: dict[str, str],
    ) -> tuple[Any, ClientResponse]:
        request = self.session.request(
            str(method), url, data=content, params=query_params, headers=headers
        )
        async with request as response:
            if 200 <= response.status < 300:
                return await response.json(), response
            text = await response.text()
            body = _json(text)
            if response.status == TOO_MANY:
                raise RateLimited(_wait_of(body, response.headers.get("Retry-After")))
            raise make_request_error(
                http_status=response.status,
                text=text,
                errcode=body.get("errcode"),
                message=body.get("error"),
            )


def _json(text: str) -> dict[str, Any]:
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _wait_of(body: dict[str, Any], header: str | None) -> float:
    millis = body.get("retry_after_ms")
    if isinstance(millis, int | float) and not isinstance(millis, bool) and millis >= 0:
        return float(millis) / 1000
    try:
        return max(0.0, float(header)) if header is not None else DEFAULT_WAIT
    except ValueError:
        return DEFAULT_WAIT


def as_parley_error(exc: BaseException) -> ParleyError:
    if isinstance(exc, ParleyError):
        return exc
    if isinstance(exc, RateLimited):
        return Unavailable(f"Matrix asked to wait {exc.seconds:g} s",
                           retry_after_seconds=exc.seconds)  # fmt: skip
    if isinstance(exc, MatrixRequestError):
        return _answered(exc)
    if isinstance(exc, MatrixConnectionError | MatrixResponseError | aiohttp.ClientError
                  | OSError | TimeoutError):  # fmt: skip
        return Unavailable(f"the homeserver could not be reached: {type(exc).__name__}")
    raise exc


def _answered(exc: MatrixRequestError) -> ParleyError:
    status = getattr(exc, "http_status", 0)
    code = getattr(exc, "errcode", None) or "?"
    words = f"{code} {getattr(exc, 'message', '') or ''}".strip()
    if isinstance(exc, MatrixInvalidToken) or status == 401:
        return Unauthorized("the homeserver refused the access token (set a new one with"
                            " 'parley channel account token')")  # fmt: skip
    if status == 403:
        return Forbidden(f"the homeserver refused: {words}")
    if status == 404:
        return NotFound(f"the homeserver does not know it: {words}")
    if status == TOO_MANY or status >= 500:
        return Unavailable(f"the homeserver is away for a moment: {status} {words}")
    return Invalid(f"the homeserver refused the request: {status} {words}")


@asynccontextmanager
async def speaking_to_matrix(
    on_rate_limit: Callable[[float], None] | None = None,
) -> AsyncIterator[None]:
    """Raise what goes wrong inside as Parley's errors (unknown failures stay bugs); a rate
    limit is told to ``on_rate_limit`` first (the account's state shows it)."""
    try:
        yield
    except (TimeoutError, MatrixError, aiohttp.ClientError, OSError) as exc:
        if isinstance(exc, RateLimited) and on_rate_limit is not None:
            on_rate_limit(exc.seconds)
        raise as_parley_error(exc) from exc
