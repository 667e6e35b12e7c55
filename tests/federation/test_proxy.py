"""The fault proxy against a counting echo server (uvicorn, in a thread): each fault really
happens and is counted, pass-through is transparent, decisions reproduce from the seed, and
concurrent requests keep their own answers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import pytest
import uvicorn

from bench.ports import free_port
from tests.federation.proxy import (
    PASS_THROUGH,
    Counters,
    Fault,
    FaultProxy,
    Faults,
    ProxyFactory,
)

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Seen:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    whole: bool  # False: the client went away before the end of the body


@dataclass
class EchoUpstream:
    """Answers each whole request with its own body, the status asked in ``x-status`` (200 by
    default) and ``x-echo-count``: how many requests it has seen, this one included."""

    url: str = ""
    seen: list[Seen] = field(default_factory=list)

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        body, whole = b"", False
        while not whole:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            body += message.get("body", b"")
            whole = not message.get("more_body", False)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        target = scope["raw_path"].decode() + (
            f"?{scope['query_string'].decode()}" * bool(scope["query_string"])
        )
        self.seen.append(Seen(scope["method"], target, headers, body, whole))
        if not whole:
            return
        answer_headers = [
            (b"content-type", headers.get("content-type", "application/octet-stream").encode()),
            (b"x-echo-count", str(len(self.seen)).encode()),
            (b"x-upstream", b"echo"),
        ]
        chunked = "x-chunked" in headers  # uvicorn frames an answer without a length in chunks
        if not chunked:
            answer_headers.append((b"content-length", str(len(body)).encode()))
        status = int(headers.get("x-status", "200"))
        await send({"type": "http.response.start", "status": status, "headers": answer_headers})
        half = len(body) // 2
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:]})

    @property
    def whole(self) -> list[Seen]:
        return [seen for seen in self.seen if seen.whole]


@pytest.fixture
def upstream() -> Iterator[EchoUpstream]:
    echo = EchoUpstream()
    port = free_port()
    config = uvicorn.Config(echo, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(1000):
        if server.started:
            break
        threading.Event().wait(0.01)
    echo.url = f"http://127.0.0.1:{port}"
    yield echo
    server.should_exit = True
    thread.join(timeout=10)


async def until(predicate: Callable[[], bool]) -> None:
    for _ in range(1000):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


async def post(proxy: FaultProxy, body: bytes = b"frames", **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=proxy.url) as client:
        return await client.post("/federation/v1/frames", content=body, headers=headers)


async def test_pass_through_is_transparent(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url)
    body = bytes(range(256)) * 4096  # 1 MiB of every byte value: more than one read each way
    async with httpx.AsyncClient(base_url=proxy.url) as client:
        answer = await client.post(
            "/federation/v1/frames?batch=1",
            content=body,
            headers={"x-status": "202", "authorization": "Bearer peer-token", "X-Trace": "t1"},
        )
        missing = await client.get("/nowhere", headers={"x-status": "404"})
    assert answer.status_code == 202
    assert answer.content == body
    assert answer.headers["x-upstream"] == "echo"
    assert answer.headers["content-length"] == str(len(body))
    assert (missing.status_code, missing.content) == (404, b"")
    first = upstream.seen[0]
    assert (first.method, first.target, first.body) == (
        "POST",
        "/federation/v1/frames?batch=1",
        body,
    )
    assert first.headers["authorization"] == "Bearer peer-token"
    assert first.headers["x-trace"] == "t1"
    assert first.headers["host"] == upstream.url.removeprefix("http://")
    assert proxy.counters == Counters(received=2, forwarded=2, answered=2)  # no fault


async def test_a_chunked_request_and_a_kept_alive_connection_pass(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url)

    async def chunks() -> AsyncIterator[bytes]:
        for n in range(5):
            yield f"frame {n};".encode()

    async with httpx.AsyncClient(base_url=proxy.url) as client:
        streamed = await client.post("/frames", content=chunks(), headers={"x-chunked": "yes"})
        answers = [await client.post("/frames", content=f"{n}".encode()) for n in range(5)]
    assert streamed.content == b"frame 0;frame 1;frame 2;frame 3;frame 4;"
    assert streamed.headers["transfer-encoding"] == "chunked"
    assert [answer.content for answer in answers] == [b"0", b"1", b"2", b"3", b"4"]
    assert upstream.seen[0].headers.get("transfer-encoding") == "chunked"


async def test_a_dropped_request_never_reaches_the_upstream(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, Faults(drop_request=1.0))
    with pytest.raises(httpx.TransportError):
        await post(proxy)
    assert proxy.counters.dropped_requests == 1
    assert proxy.counters.forwarded == 0
    assert upstream.seen == []


async def test_a_dropped_response_was_applied_upstream(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, Faults(drop_response=1.0))
    with pytest.raises(httpx.TransportError):
        await post(proxy, b"applied")
    assert [seen.body for seen in upstream.whole] == [b"applied"]
    assert (proxy.counters.dropped_responses, proxy.counters.answered) == (1, 0)


async def test_a_duplicate_reaches_the_upstream_twice_and_answers_with_either_copy(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, Faults(duplicate=1.0), seed=5)
    copies = []
    for n in range(12):
        answer = await post(proxy, f"frame {n}".encode())
        assert answer.content == f"frame {n}".encode()
        copies.append(int(answer.headers["x-echo-count"]) - 2 * n)  # 1: first copy, 2: second
    assert [seen.body for seen in upstream.whole] == [
        f"frame {n}".encode() for n in range(12) for _ in range(2)
    ]
    assert copies == [1 if decision.share < 0.5 else 2 for decision in proxy.decisions]
    assert set(copies) == {1, 2}
    assert (proxy.counters.duplicated, proxy.counters.forwarded) == (12, 24)


async def test_a_held_request_is_overtaken_by_a_later_one(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, Faults(reorder=1.0, reorder_hold=30.0))
    first = asyncio.create_task(post(proxy, b"sent first"))
    await until(lambda: proxy.held == 1)
    proxy.faults = PASS_THROUGH  # the later request goes straight on; the held one stays held
    second = await post(proxy, b"sent second")
    assert (await first).content == b"sent first"
    assert second.status_code == 200
    assert [seen.body for seen in upstream.whole] == [b"sent second", b"sent first"]
    assert proxy.counters.reordered == 1


async def test_a_held_request_goes_on_alone_when_nothing_overtakes_it(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, Faults(reorder=1.0, reorder_hold=0.05))
    assert (await post(proxy, b"alone")).content == b"alone"
    assert proxy.counters.reordered == 0  # held, but not overtaken: not counted as reordered
    assert [decision.fault for decision in proxy.decisions] == ["reorder"]


async def test_pass_through_releases_held_requests(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, Faults(reorder=1.0, reorder_hold=30.0))
    held = asyncio.create_task(post(proxy, b"held"))
    await until(lambda: proxy.held == 1)
    proxy.pass_through()
    assert (await held).content == b"held"
    await proxy.wait_idle()
    assert (proxy.held, proxy.in_flight, proxy.counters.reordered) == (0, 0, 0)


async def test_delays_are_random_and_bounded(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, Faults(delay=1.0, max_delay=0.02))
    for n in range(5):
        assert (await post(proxy, f"{n}".encode())).status_code == 200
    delays = [decision.delay for decision in proxy.decisions]
    assert all(0 < delay <= 0.02 for delay in delays)
    assert len(set(delays)) == 5
    assert proxy.counters.delayed == 5


async def test_a_cut_forwards_part_of_the_body_then_closes_both_sides(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, Faults(cut=1.0), seed=3)
    body = b"x" * 10_000
    with pytest.raises(httpx.TransportError):
        await post(proxy, body)
    await until(lambda: len(upstream.seen) == 1)
    (seen,) = upstream.seen
    assert not seen.whole
    assert len(seen.body) < len(body)
    assert len(seen.body) == int(len(body) * proxy.decisions[0].share)
    assert (proxy.counters.cut, proxy.counters.forwarded) == (1, 0)


async def test_an_unreachable_upstream_is_a_bad_gateway(fault_proxy: ProxyFactory) -> None:
    proxy = await fault_proxy(f"http://127.0.0.1:{free_port()}")
    answer = await post(proxy)
    assert answer.status_code == 502
    assert proxy.counters.upstream_errors == 1


MIXED = Faults(
    drop_request=0.15, drop_response=0.15, duplicate=0.15, cut=0.15, delay=0.3, max_delay=0.005
)


async def _outcomes(proxy: FaultProxy, count: int) -> list[str]:
    outcomes = []
    for n in range(count):
        try:
            outcomes.append(f"{(await post(proxy, f'{n}'.encode())).status_code}")
        except httpx.TransportError:
            outcomes.append("cut off")
    return outcomes


async def test_the_same_seed_gives_the_same_faults(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    one = await fault_proxy(upstream.url, MIXED, seed=11)
    two = await fault_proxy(upstream.url, MIXED, seed=11)
    other = await fault_proxy(upstream.url, MIXED, seed=12)
    assert await _outcomes(one, 30) == await _outcomes(two, 30)
    await _outcomes(other, 30)
    assert one.decisions == two.decisions
    assert one.counters == two.counters
    assert [d.fault for d in one.decisions] != [d.fault for d in other.decisions]
    assert {d.fault for d in one.decisions} == {
        None,
        "drop_request",
        "drop_response",
        "duplicate",
        "cut",
    }


async def test_switching_to_pass_through_ends_the_faults(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    proxy = await fault_proxy(upstream.url, MIXED, seed=2)
    assert "cut off" in await _outcomes(proxy, 20)
    proxy.pass_through()
    assert await _outcomes(proxy, 20) == ["200"] * 20
    await proxy.wait_idle()
    assert proxy.in_flight == 0


async def test_concurrent_requests_keep_their_own_answers(upstream: EchoUpstream) -> None:
    async with FaultProxy(upstream.url, Faults(delay=1.0, max_delay=0.01), seed=1) as proxy:
        limits = httpx.Limits(max_connections=16)
        async with httpx.AsyncClient(base_url=proxy.url, limits=limits) as client:
            bodies = [f"message {n}".encode() for n in range(64)]
            answers = await asyncio.gather(
                *(client.post("/frames", content=body) for body in bodies)
            )
    assert [answer.content for answer in answers] == bodies
    assert sorted(seen.body for seen in upstream.whole) == sorted(bodies)
    assert proxy.counters.answered == 64


async def test_the_first_faults_come_in_order_then_the_seed_s_draws(
    upstream: EchoUpstream, fault_proxy: ProxyFactory
) -> None:
    firsts: tuple[Fault, ...] = ("duplicate", "drop_response", "cut")
    forced = await fault_proxy(upstream.url, replace(MIXED, first=firsts), seed=11)
    drawn = await fault_proxy(upstream.url, MIXED, seed=11)
    await _outcomes(forced, 20)
    await _outcomes(drawn, 20)
    faults = [d.fault for d in forced.decisions]
    assert faults[:3] == list(firsts)
    assert faults[3:] == [d.fault for d in drawn.decisions][3:]  # the same draws after them
    assert (forced.counters.duplicated, forced.counters.dropped_responses) >= (1, 1)
    assert forced.counters.cut >= 1


async def test_faults_and_upstreams_are_checked() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        Faults(drop_request=1.5)
    with pytest.raises(ValueError, match="'lost' is not a fault"):
        Faults(first=("lost",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="add up to more than 1"):
        Faults(drop_request=0.6, cut=0.6)
    with pytest.raises(ValueError, match="http://HOST:PORT"):
        FaultProxy("https://peer.example")
