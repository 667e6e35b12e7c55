"""A remote kind for the outbox's tests: a small HTTP receiver on a loopback port that answers
as scripted (503s, a rejection, a request that never ends) and then accepts, recording the
idempotency key of every request; and the deliverer that sends frames to it over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import ClassVar

import httpx
import uvicorn
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

from bench.ports import free_port
from parley.clock import Clock
from parley.deliveries.model import Payload
from parley.errors import Invalid, Unavailable
from parley.store import Tx
from tests.support import eventually

HANG = "hang"  # a scripted answer: the request is held until the receiver shuts down


class Frame(Payload):
    kind: ClassVar[str] = "test_frame"
    body: str


@dataclass
class Receiver:
    url: str = ""
    # What the next requests are answered, in order (a status, a status with its reason, or
    # HANG); then 200.
    script: list[int | str | tuple[int, str]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # the key of every request, as it arrived
    accepted: dict[str, str] = field(default_factory=dict)  # key → body, once per key
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/frames")
        async def frames(request: Request) -> Response:
            key = request.headers["Idempotency-Key"]
            self.keys.append(key)
            answer = self.script.pop(0) if self.script else 200
            if answer == HANG:
                await self.release.wait()
                return JSONResponse({"verdict": "too late"}, status_code=503)
            status, reason = answer if isinstance(answer, tuple) else (answer, f"scripted {answer}")
            if status != 200:
                return JSONResponse({"reason": reason}, status_code=int(status))
            verdict = "duplicate" if key in self.accepted else "accepted"
            self.accepted.setdefault(key, (await request.json())["body"])
            return JSONResponse({"verdict": verdict})

        return app


@asynccontextmanager
async def receiving() -> AsyncIterator[Receiver]:
    receiver = Receiver()
    port = free_port()
    config = uvicorn.Config(receiver.app(), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    assert await eventually(lambda: _started(server)), "the receiver did not start"
    receiver.url = f"http://127.0.0.1:{port}"
    try:
        yield receiver
    finally:
        receiver.release.set()
        server.should_exit = True
        await serving


async def _started(server: uvicorn.Server) -> bool:
    return server.started


class FrameSender:
    """The remote deliverer: POST the frame with the item's key; 5xx and transport failures
    are transient, 4xx a final verdict."""

    timeout = 5.0

    def __init__(self, url: str) -> None:
        self._url = url
        self.undeliverable_reasons: list[tuple[str, str]] = []

    async def send(self, payload: Frame, idempotency_key: str) -> None:
        headers = {"Idempotency-Key": idempotency_key}
        try:
            async with httpx.AsyncClient(base_url=self._url, timeout=self.timeout) as http:
                response = await http.post("/frames", json=payload.model_dump(), headers=headers)
        except httpx.TransportError as exc:
            raise Unavailable(f"the receiver is unreachable: {exc!r}") from exc
        if response.status_code >= 500:
            raise Unavailable(f"the receiver answered {response.status_code}")
        if response.status_code >= 400:
            raise Invalid(f"the receiver rejected it: {response.json()['reason']}")

    async def undeliverable(self, tx: Tx, clock: Clock, payload: Frame, reason: str) -> None:
        self.undeliverable_reasons.append((payload.body, reason))
