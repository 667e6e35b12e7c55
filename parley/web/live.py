"""The page's live parts: a part is rendered again whenever a committed transaction set
something in motion (a run started or ended, text queued, a topic closed), at most a few times
a second, and sent as a server-sent event when it changed. Rendering again through the same
reads keeps the same visibility rules: nothing is pushed that the page would not show."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable

from fastapi import Request
from fastapi.responses import StreamingResponse

from parley.store.effects import Effects

SETTLE_SECONDS = 0.15  # commits that come together are rendered once
REFRESH_SECONDS = 10.0  # a part is looked at this often anyway (a node's heartbeat, a clock)


class Pulse:
    """Counts committed transactions that set something in motion; waiters wake at each."""

    def __init__(self) -> None:
        self.beats = 0
        self._changed = asyncio.Event()
        self.closing = asyncio.Event()  # the server stops: every stream ends

    def close(self) -> None:
        self.closing.set()
        self._changed.set()

    async def on_commit(self, effects: Effects) -> None:
        self.beats += 1
        self._changed.set()
        if not self.closing.is_set():
            self._changed = asyncio.Event()

    async def after(self, beats: int, timeout: float) -> None:
        """Return once a commit after ``beats`` happened, or after ``timeout`` seconds."""
        if self.beats != beats:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)


Render = Callable[[], Awaitable[str | None]]  # the part's HTML now; None: stop (signed out)


def event(name: str, data: str) -> bytes:
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"event: {name}\n{lines}\n".encode()


def live_part(request: Request, pulse: Pulse, render: Render) -> StreamingResponse:
    """The part, then again at each change, until the browser goes or the sign-in ends."""

    async def events() -> AsyncIterator[bytes]:
        sent: str | None = None
        while not pulse.closing.is_set() and not await request.is_disconnected():
            beats = pulse.beats
            html = await render()
            if html is None:
                yield event("signed-out", "")
                return
            if html != sent:
                yield event("part", html)
                sent = html
            else:
                yield b": still here\n\n"  # keeps proxies from closing an idle stream
            await pulse.after(beats, REFRESH_SECONDS)
            await asyncio.sleep(SETTLE_SECONDS)

    return StreamingResponse(events(), media_type="text/event-stream", headers=NO_CACHE)


def chunk_event(text: str) -> bytes:
    return event("chunk", json.dumps(text))


NO_CACHE = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
