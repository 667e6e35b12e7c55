"""A fault-injecting HTTP/1.1 proxy for tests, put between two installations on loopback.

It listens on a loopback port and forwards each request, read whole, to one upstream
(``http://host:port``) over a connection of its own, then writes the upstream's answer back.
Per request it may, drawing from a seeded ``random.Random`` so that a failure reproduces (the
first requests given the faults ``Faults.first`` lists, in order, then chance):

- ``drop_request``: close the client's connection without forwarding;
- ``drop_response``: forward, then close the client's connection without the answer (the
  upstream applied it; the sender sees a cut and resends);
- ``duplicate``: forward twice, one after the other, and answer with one of the two answers;
- ``reorder``: hold the request until a later one has been forwarded (at most ``reorder_hold``
  seconds), then forward it;
- ``cut``: forward the head and part of the body, then close both sides;
- ``delay`` (independent of the others): wait up to ``max_delay`` seconds before forwarding.

Messages are buffered whole, both ways: fine for request/response batches, not for streams.
An unreachable upstream is answered ``502 Bad Gateway``. ``counters`` say what was done and
``decisions`` list each request's fault, for assertions that faults really happened; assigning
``faults`` changes them for the next requests, ``pass_through()`` also releases held requests.
One proxy carries one direction: installation A reaches B through it when A was given the
proxy's URL as B's (B's ``--public-url``); a fixed ``port`` lets a restarted proxy keep it.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

import h11
import pytest

from tests.federation.http11 import (
    Exchange,
    HttpRequest,
    HttpResponse,
    read_request,
    write_response,
)

Fault = Literal["drop_request", "drop_response", "duplicate", "reorder", "cut"]
EXCLUSIVE: tuple[Fault, ...] = ("drop_request", "drop_response", "duplicate", "reorder", "cut")


@dataclass(frozen=True)
class Faults:
    """The chance of each fault per request. At most one of the exclusive ones (all but
    ``delay``) happens to a request, so their chances add up to at most 1."""

    drop_request: float = 0.0
    drop_response: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    cut: float = 0.0
    delay: float = 0.0
    max_delay: float = 0.05  # seconds
    reorder_hold: float = 1.0  # seconds a held request waits for a later one to overtake it
    # The faults of the first requests these faults meet, in order, before chance decides: a
    # test that must see each fault happen sees it however few requests a fast run makes.
    first: tuple[Fault, ...] = ()

    def __post_init__(self) -> None:
        for name in (*EXCLUSIVE, "delay"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} is a chance: between 0 and 1, not {getattr(self, name)}")
        if sum(getattr(self, name) for name in EXCLUSIVE) > 1.0:
            raise ValueError(f"the chances of {', '.join(EXCLUSIVE)} add up to more than 1")
        if unknown := [fault for fault in self.first if fault not in EXCLUSIVE]:
            raise ValueError(f"{unknown[0]!r} is not a fault: one of {', '.join(EXCLUSIVE)}")
        if self.max_delay < 0 or self.reorder_hold <= 0:
            raise ValueError("max_delay must be >= 0 and reorder_hold > 0 seconds")

    def draw(self, rng: random.Random) -> Fault | None:
        roll, reach = rng.random(), 0.0
        for name in EXCLUSIVE:
            reach += getattr(self, name)
            if roll < reach:
                return name
        return None


PASS_THROUGH = Faults()


@dataclass
class Counters:
    received: int = 0  # whole requests read from clients
    forwarded: int = 0  # requests sent whole to the upstream (a duplicate's two copies count 2)
    answered: int = 0  # answers written back to clients
    dropped_requests: int = 0
    dropped_responses: int = 0
    duplicated: int = 0
    reordered: int = 0  # held requests that a later one really overtook
    delayed: int = 0
    cut: int = 0
    upstream_errors: int = 0  # upstream unreachable or broken: answered 502


@dataclass(frozen=True)
class Decision:
    number: int  # the request's place in arrival order, from 1
    method: str
    target: str
    fault: Fault | None
    delay: float  # seconds waited before forwarding (0: none)
    share: float  # cut: the part of the body forwarded; duplicate: < 0.5 answers the first copy


@dataclass
class _Hold:
    number: int
    released: asyncio.Event = field(default_factory=asyncio.Event)
    overtaken: bool = False


class FaultProxy:
    """``async with FaultProxy("http://127.0.0.1:8701", Faults(drop_response=0.2), seed=7) as
    proxy:`` then point the sender at ``proxy.url``."""

    def __init__(
        self, upstream: str, faults: Faults = PASS_THROUGH, *, seed: int = 0, port: int = 0
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname or parts.path not in ("", "/"):
            raise ValueError(f"the upstream is http://HOST:PORT, not {upstream!r}")
        self.upstream = (parts.hostname, parts.port or 80)
        self.faults = faults
        self.counters = Counters()
        self.decisions: list[Decision] = []
        self._rng = random.Random(seed)
        self._first_of: Faults | None = None  # the faults whose ``first`` are being given
        self._firsts_given = 0
        self._port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._holds: list[_Hold] = []
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the proxy is not started")
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    @property
    def in_flight(self) -> int:
        """Requests read and not yet answered or dropped."""
        return self._in_flight

    @property
    def held(self) -> int:
        """Requests held back, waiting for a later one to overtake them."""
        return len(self._holds)

    def pass_through(self) -> None:
        """No more faults from now on, and held requests go on at once."""
        self.faults = PASS_THROUGH
        self._release(lambda _: True, overtaken=False)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Until no request is in flight through the proxy."""
        async with asyncio.timeout(timeout):
            await self._idle.wait()

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self._port)
        return self

    async def close(self) -> None:
        self._release(lambda _: True, overtaken=False)
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def __aenter__(self) -> FaultProxy:
        return await self.start()

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One client connection (asyncio runs it as a task of its own): its requests in turn."""
        if (task := asyncio.current_task()) is not None:
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
        client = h11.Connection(h11.SERVER)
        try:
            while (request := await read_request(client, reader)) is not None:
                self._count_in_flight(+1)
                try:
                    answered = await self._handle(request, client, writer)
                finally:
                    self._count_in_flight(-1)
                if not answered or client.our_state is not h11.DONE:
                    break
                client.start_next_cycle()
        except (h11.ProtocolError, ConnectionError):
            pass  # a client that breaks the protocol or goes away just loses its connection
        except asyncio.CancelledError:
            pass  # closed by close(): asyncio's done-callback would log a cancelled task
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    def _count_in_flight(self, change: int) -> None:
        self._in_flight += change
        if self._in_flight:
            self._idle.clear()
        else:
            self._idle.set()

    async def _handle(
        self, request: HttpRequest, client: h11.Connection, writer: asyncio.StreamWriter
    ) -> bool:
        """Forward one request with its fault; whether it was answered."""
        decision = self._decide(request)
        if decision.delay:
            self.counters.delayed += 1
            await asyncio.sleep(decision.delay)
        if decision.fault == "drop_request":
            self.counters.dropped_requests += 1
            return False
        if decision.fault == "cut":
            await self._exchange(request).cut(decision.share)
            self.counters.cut += 1
            return False
        if decision.fault == "reorder":
            await self._hold(decision.number)
        response = await self._forward(request, decision.number)
        if decision.fault == "duplicate":
            again = await self._forward(request, decision.number)
            self.counters.duplicated += 1
            response = response if decision.share < 0.5 else again
        if decision.fault == "drop_response":
            self.counters.dropped_responses += 1
            return False
        await write_response(client, writer, response or _bad_gateway())
        self.counters.answered += 1
        return True

    def _decide(self, request: HttpRequest) -> Decision:
        """Every draw for a request at once, in arrival order, four of them whatever the faults:
        the same seed and the same requests give the same decisions."""
        faults, rng = self.faults, self._rng
        self.counters.received += 1
        delayed, amount, fault, share = (
            rng.random() < faults.delay,
            rng.random(),
            faults.draw(rng),
            rng.random(),
        )
        fault = self._forced(faults, fault)
        decision = Decision(
            number=self.counters.received,
            method=request.method,
            target=request.target,
            fault=fault,
            delay=faults.max_delay * amount if delayed else 0.0,
            share=share,
        )
        self.decisions.append(decision)
        return decision

    def _forced(self, faults: Faults, drawn: Fault | None) -> Fault | None:
        """The fault ``faults.first`` gives the next request it has not given one yet, else the
        one drawn (drawn all the same, so that the draws after stay those of the seed)."""
        if self._first_of is not faults:
            self._first_of, self._firsts_given = faults, 0
        if self._firsts_given < len(faults.first):
            self._firsts_given += 1
            return faults.first[self._firsts_given - 1]
        return drawn

    def _exchange(self, request: HttpRequest) -> Exchange:
        host, port = self.upstream
        return Exchange(host, port, request)

    async def _forward(self, request: HttpRequest, number: int) -> HttpResponse | None:
        """The upstream's answer, or None when it could not be had."""
        response = await self._exchange(request).run()
        if response is None:
            self.counters.upstream_errors += 1
            return None
        self.counters.forwarded += 1
        self._release(lambda hold: hold.number < number, overtaken=True)
        return response

    async def _hold(self, number: int) -> None:
        hold = _Hold(number)
        self._holds.append(hold)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.faults.reorder_hold):
                    await hold.released.wait()
        finally:
            if hold in self._holds:
                self._holds.remove(hold)
        if hold.overtaken:
            self.counters.reordered += 1

    def _release(self, which: Callable[[_Hold], bool], *, overtaken: bool) -> None:
        for hold in [hold for hold in self._holds if which(hold)]:
            hold.overtaken = overtaken
            hold.released.set()
            self._holds.remove(hold)


def _bad_gateway() -> HttpResponse:
    body = b"the proxy could not reach its upstream\n"
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    return HttpResponse(502, b"Bad Gateway", headers, body)


ProxyFactory = Callable[..., Awaitable[FaultProxy]]


@pytest.fixture
async def fault_proxy() -> AsyncIterator[ProxyFactory]:
    """``proxy = await fault_proxy(upstream_url, Faults(...), seed=3)``: proxies closed after
    the test."""
    started: list[FaultProxy] = []

    async def start(upstream: str, faults: Faults = PASS_THROUGH, *, seed: int = 0) -> FaultProxy:
        proxy = await FaultProxy(upstream, faults, seed=seed).start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        await proxy.close()
