"""Test support: a clock we can move, and Parley started in process behind real HTTP semantics."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import httpx
from fastapi import FastAPI

from bench.machines import until as polled
from parley.app import create_app
from parley.broker.port import Broker
from parley.context import Context
from parley.deliveries.model import Delivery
from parley.people.bootstrap import owner_token_path
from parley.settings import Settings
from parley.startup import running
from parley.store import Tx


class ManualClock:
    """A real Clock whose time only moves when a test says so."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> None:
        self._now += timedelta(**delta)


T = TypeVar("T")


def until(check: Callable[[], T], within: float = 30.0, pause: float = 0.05) -> T | None:
    """``eventually`` for a check that blocks (a CLI, a synchronous request): bench's loop,
    asked more often and bounded sooner."""
    return polled(check, within, pause)


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 30.0) -> bool:
    """Poll ``check`` until it holds; for effects of background work (heartbeats, the sweeper).
    The bound only guards against a hang: a passing run returns as soon as the check holds. It
    is long because a loaded machine is slow: a fresh clone's run once waited more than 10 s for
    a model brain's first approval (its worker's first turn on that provider, SDK import
    included)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not await check():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Harness:
    context: Context
    transport: httpx.ASGITransport
    owner: httpx.AsyncClient
    clock: ManualClock

    def client(self, token: str | None = None) -> httpx.AsyncClient:
        headers = bearer(token) if token else {}
        return httpx.AsyncClient(
            transport=self.transport, base_url="http://parley", headers=headers
        )

    async def add_person(self, name: str, role: str = "member") -> str:
        response = await self.owner.post("/api/v1/people", json={"name": name, "role": role})
        assert response.status_code == 201, response.text
        token = response.json()["token"]
        assert isinstance(token, str)
        return token

    async def hire(self, name: str, **fields: Any) -> dict[str, Any]:
        body = {"name": name, "node": "local", **fields}
        response = await self.owner.post("/api/v1/agents", json=body)
        assert response.status_code == 201, response.text
        agent = response.json()
        assert isinstance(agent, dict)
        return agent

    async def agent(self, name: str) -> dict[str, Any]:
        response = await self.owner.get(f"/api/v1/agents/{name}")
        assert response.status_code == 200, response.text
        agent = response.json()
        assert isinstance(agent, dict)
        return agent


async def call(parley: Harness, method: str, path: str, **body: Any) -> Any:
    """The owner's call of the API at ``path`` (under /api/v1), which must succeed; its JSON."""
    response = await parley.owner.request(method, f"/api/v1{path}", json=body or None)
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


async def lifecycle_is(parley: Harness, name: str, state: str) -> bool:
    return bool((await parley.agent(name))["lifecycle"] == state)


@asynccontextmanager
async def started(
    settings: Settings, clock: ManualClock, mesh: Broker | None = None
) -> AsyncIterator[Harness]:
    """A hub in this process, on ``mesh`` (a broker the caller opened and closes) or the
    in-process broker."""
    if mesh is None:
        app = create_app(settings, clock)
        async with app.router.lifespan_context(app), _harness(app, settings, clock) as harness:
            yield harness
        return
    async with running(settings, clock, mesh) as context:
        app = create_app(settings, clock, context)
        async with app.router.lifespan_context(app), _harness(app, settings, clock) as harness:
            yield harness


@asynccontextmanager
async def _harness(app: FastAPI, settings: Settings, clock: ManualClock) -> AsyncIterator[Harness]:
    transport = httpx.ASGITransport(app=app)
    token = owner_token_path(settings.data_dir).read_text().strip()
    async with httpx.AsyncClient(
        transport=transport, base_url="http://parley", headers=bearer(token)
    ) as owner:
        yield Harness(app.state.context, transport, owner, clock)


def items(page: Any) -> list[Any]:
    """The rows of one page of a list (checked to be a page)."""
    assert isinstance(page, dict) and set(page) == {"items", "next"}, page
    rows = page["items"]
    assert isinstance(rows, list)
    return rows


def oldest_first(page: Any) -> list[Any]:
    """A page of a list that comes newest first (a topic's messages, its runs), in reading order."""
    return list(reversed(items(page)))


async def delivery_by_key(tx: Tx, key: str) -> Delivery | None:
    """The outbox item with idempotency key ``key``, as the deliveries list shows it."""
    listed = await tx.outbox.listed([], None, 10_000)
    return next((item for item in listed if item.key == key), None)
