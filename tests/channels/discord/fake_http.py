"""The HTTP side shared by the fake's REST routes: bodies, Discord's error answers, failures."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from tests.channels.discord.fake_state import JSON, FakeError, PlannedFailure

API = "/api/v10"
FAILURE_TEXT = {403: (50013, "Missing Permissions"), 404: (10003, "Unknown Channel")}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def bot_token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization")
    return header.removeprefix("Bot ") if header else None


async def read_body(request: web.Request) -> JSON:
    """A JSON object body, or the payload_json part of a multipart one (how files are sent)."""
    body = await read_json(request)
    if not isinstance(body, dict):
        raise FakeError(400, 50035, "Invalid Form Body: expected a JSON object")
    return body


async def read_json(request: web.Request) -> Any:
    if not request.can_read_body:
        return {}
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        raw: Any = form.get("payload_json", "{}")
    else:
        raw = await request.text()
    try:
        return json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        raise FakeError(400, 50109, "The request body contains invalid JSON.") from exc


def message_content(body: JSON) -> str:
    content = str(body.get("content") or "")
    if not content and not body.get("embeds"):
        raise FakeError(400, 50006, "Cannot send an empty message")
    if len(content) > 2000:
        raise FakeError(400, 50035, "Invalid Form Body: content must be 2000 or fewer in length.")
    return content


def required_text(body: JSON, key: str, *, limit: int) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not 1 <= len(value) <= limit:
        raise FakeError(400, 50035, f"Invalid Form Body: {key} must be 1 to {limit} characters")
    return value


def waited(request: web.Request, data: JSON) -> web.Response:
    if request.query.get("wait") in ("1", "true", "True"):
        return json_response(data)
    return web.Response(status=204)


def json_response(
    data: object, *, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    # discord.py parses a body as JSON only when Content-Type is exactly application/json.
    headers = {**(headers or {}), "Content-Type": "application/json"}
    return web.Response(body=json.dumps(data).encode(), status=status, headers=headers)


def error_response(status: int, code: int, message: str) -> web.Response:
    return json_response({"message": message, "code": code}, status=status)


def planned_failure_response(failure: PlannedFailure) -> web.Response:
    if failure.status == 429:
        body = {"message": "You are being rate limited.", "retry_after": failure.retry_after}
        headers = {
            "Retry-After": str(math.ceil(failure.retry_after)),
            # discord.py takes a 429 without Via for a Cloudflare ban and gives up.
            "Via": "1.1 google",
            "X-RateLimit-Scope": "user",
        }
        return json_response({**body, "global": False}, status=429, headers=headers)
    code, message = FAILURE_TEXT.get(failure.status, (0, f"{failure.status}: planned failure"))
    return error_response(failure.status, code, message)
