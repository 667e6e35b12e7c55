"""What the fake providers share: a script of replies, a record of requests, a server thread."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from bench.ports import free_port


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One scripted model response: text, tool calls, an HTTP error status, or a raw body. In an
    error's text, ``{key}`` is the API key the request carried (providers quote a refused one)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    status: int = 200
    # Sent as is with status 200 instead of a proper answer (a proxy's page, a broken server).
    raw: str | None = None


@dataclass
class Script:
    replies: list[Reply]
    # Every request body and its headers (lowercased names), in arrival order.
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.bodies.append(body)
        self.headers.append(headers)
        if not self.replies:
            return Reply(text="the fake's script has run out", status=500)
        return self.replies.pop(0)


def pieces(text: str, size: int = 4) -> list[str]:
    """Split text so it crosses the wire in several chunks, as real providers do."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def args_pieces(args: dict[str, Any]) -> list[str]:
    return pieces(json.dumps(args), size=7)


def sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


@dataclass(frozen=True)
class Fake:
    """A running fake provider: the base URL its SDK is given, and its script."""

    url: str
    script: Script


@contextmanager
def serving(app: ASGIApp) -> Iterator[str]:
    """Run the app on a free loopback port for the block; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(3000):
        if server.started or not thread.is_alive():
            break
        time.sleep(0.01)
    if not server.started:  # said here, not later as a model that never answers
        server.should_exit = True
        raise RuntimeError(f"the fake server did not start on port {port}")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
