"""A2A push notifications, through Parley's outbox: each state a task reaches is one outbox item
per push config (its key: the config, the task, the run it follows, the state — so a change is
pushed once however often it is seen, and a state reached again in a later turn of a continued
task once more), sent by the outbox worker with its retries and backoff. The URL is checked
when the config is set and again before each send (a name may resolve elsewhere later): one
that resolves to a loopback, private, link-local, reserved or metadata address (169.254.169.254)
is refused, unless an owner allowed its host (``a2a_push_allowed_hosts``). A send connects to the
very address it checked, the URL's name kept for the Host header and TLS (its certificate is
verified for that name): resolved again to connect, a name that answers once with an outside
address and then with an inside one (DNS rebinding) would reach what the check refused."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

import httpx
from a2a.types.a2a_pb2 import StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict

from parley.a2a.model import PushConfig
from parley.a2a.tasks import TERMINAL, as_task, now_of
from parley.clock import Clock
from parley.deliveries.model import Payload
from parley.errors import Invalid, Unavailable
from parley.redact import redact
from parley.store import Store, Tx
from parley.store.a2a_tasks import TaskRow
from parley.store.effects import Effects
from parley.tls import ClientOnFirstUse
from parley.worker import Worker

log = logging.getLogger(__name__)

PUSH_KIND = "a2a-push"
SAFETY_SECONDS = 5.0  # a pass while configs wait, should a wake be lost
MAX_URL = 2000


class PushNotice(Payload):
    kind: ClassVar[str] = PUSH_KIND
    url: str
    token: str | None
    auth_scheme: str | None
    auth_credentials: str | None
    body: str  # the StreamResponse, as JSON

    def __repr__(self) -> str:  # never the secrets, in a log or a traceback
        return f"PushNotice({self.url!r})"


# The addresses a host resolves to (host, port): the system's resolver, or a test's.
Resolver = Callable[[str, int], Awaitable[list[str]]]


async def resolved(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def check_push_url(
    url: str, allowed_hosts: Sequence[str], resolve: Resolver = resolved
) -> list[str]:
    """The addresses to push to ``url`` at, in the resolver's order: its host's, resolved once,
    all of them outside (or the host allowed by an owner); Invalid otherwise."""
    parsed = _parsed(url)
    host = parsed.raw_host.decode("ascii")
    try:
        addresses = await resolve(host, parsed.port or _DEFAULT_PORTS[parsed.scheme])
    except OSError:
        addresses = []
    if host.lower() in allowed_hosts and addresses:
        return addresses
    if not addresses or any(_inside(address) for address in addresses):
        raise Invalid(
            f"push URL {url[:200]!r}: its host resolves to a loopback, private, link-local,"
            " reserved or metadata address, or does not resolve; Parley does not push there"
            " (an owner may allow the host: a2a_push_allowed_hosts)"
        )
    return addresses


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _parsed(url: str) -> httpx.URL:
    said = f"push URL {url[:200]!r}: an http(s) URL of at most {MAX_URL} characters"
    if len(url) > MAX_URL or "\x00" in url:
        raise Invalid(said)
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise Invalid(said) from None
    if parsed.scheme not in _DEFAULT_PORTS or not parsed.raw_host:
        raise Invalid(said)
    return parsed


def _inside(address: str) -> bool:
    """Not a public unicast destination (an IPv4-mapped IPv6 address judged as the IPv4 one
    inside it; 100.64.0.0/10, shared, is not global either)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        not ip.is_global
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


def pinned(url: str, address: str) -> tuple[httpx.URL, dict[str, str], dict[str, str]]:
    """``url`` sent to ``address``: that URL, and the Host header and TLS name of the URL's."""
    given = httpx.URL(url)
    host = given.raw_host.decode("ascii")
    return (
        given.copy_with(host=address),
        {"Host": given.netloc.decode("ascii")},
        {"sni_hostname": host},
    )


class PushSender:
    """The outbox's deliverer of push notices."""

    timeout = 10.0

    def __init__(
        self,
        allowed_hosts: Sequence[str],
        transport: httpx.AsyncBaseTransport | None = None,
        resolve: Resolver = resolved,
    ) -> None:
        self._allowed = [host.lower() for host in allowed_hosts]
        self._resolve = resolve
        # No connection kept between pushes: kept by address, one verified for a name would
        # carry the push of another name at that address, unverified.
        self._http = ClientOnFirstUse(
            timeout=self.timeout,
            transport=transport,
            limits=httpx.Limits(max_keepalive_connections=0),
        )

    async def send(self, payload: PushNotice, idempotency_key: str) -> None:
        addresses = await check_push_url(payload.url, self._allowed, self._resolve)
        headers = {"Content-Type": "application/json", "X-A2A-Notification-Id": idempotency_key}
        if payload.token:
            headers["X-A2A-Notification-Token"] = payload.token
        if payload.auth_scheme and payload.auth_credentials:
            headers["Authorization"] = f"{payload.auth_scheme} {payload.auth_credentials}"
        response = await self._posted(payload, headers, addresses)
        if response.is_success:
            return
        said = f"{payload.url} answered HTTP {response.status_code}: {redact(response.text)[:200]}"
        if response.status_code >= 500 or response.status_code in (408, 429):
            raise Unavailable(said)
        raise Invalid(said)

    async def _posted(
        self, payload: PushNotice, headers: dict[str, str], addresses: list[str]
    ) -> httpx.Response:
        """Posted at the first of ``addresses`` that takes the connection (a host's IPv6 one
        may be unreachable from here, its IPv4 one not)."""
        for address in addresses:
            url, host, extensions = pinned(payload.url, address)
            try:
                return await self._http.http.post(
                    url, content=payload.body, headers=headers | host, extensions=extensions
                )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                failed: httpx.HTTPError = exc
            except httpx.HTTPError as exc:
                raise _unreachable(payload, exc) from exc
        raise _unreachable(payload, failed) from failed

    async def undeliverable(self, tx: Tx, clock: Clock, payload: PushNotice, reason: str) -> None:
        # The client reads the task's state with GetTask all the same; the outbox keeps why.
        log.warning("a push notice to %s failed for good: %s", payload.url, reason)

    async def close(self) -> None:
        await self._http.aclose()


def _unreachable(payload: PushNotice, exc: httpx.HTTPError) -> Unavailable:
    return Unavailable(f"cannot reach {payload.url}: {exc or type(exc).__name__}")


class PushNotices(Worker):
    """Queues the notices due: each config's task in the state it is now, once per state."""

    def __init__(self, store: Store, clock: Clock) -> None:
        super().__init__("a2a-pushes", logger=log)
        self._store, self._clock = store, clock
        # Whether a config may wait: a run's change wakes the queue only then (a pass per turn
        # for no config at all cost a fifth of an A2A message's time). Configs set since a
        # pass began count as waiting, whatever that pass read.
        self._waiting = True
        self._configs_set = 0

    async def on_commit(self, effects: Effects) -> None:
        if effects.pushes:
            self._configs_set += 1
            self.wake()
        elif self._waiting and (effects.changed or effects.approvals):
            self.wake()

    async def one_pass(self) -> float | None:
        set_before = self._configs_set
        async with self._store.transaction() as tx:
            due = await tx.a2a.pushes_due()
            for push, task in due:
                await self._queue(tx, push, task)
        self._waiting = bool(due) or self._configs_set != set_before
        return SAFETY_SECONDS if due else None

    async def _queue(self, tx: Tx, push: PushConfig, task: TaskRow) -> None:
        now = await now_of(tx, task)
        state = now.state
        asked = f"-{now.asking.id}" if now.asking is not None else ""  # each question is pushed
        run = now.run.id if now.run is not None else "none"  # a state again in a later turn too
        key = f"{PUSH_KIND}:{push.id}:{task.message_id}:{run}:{TaskState.Name(state)}{asked}"
        body = MessageToDict(StreamResponse(task=as_task(now)))
        notice = PushNotice(
            url=push.url,
            token=push.token,
            auth_scheme=push.auth_scheme,
            auth_credentials=push.auth_credentials,
            body=json.dumps(body),
        )
        if await tx.outbox.put(key, notice, self._clock.now()):
            tx.effects.outbox = True
        if state in TERMINAL:
            await tx.a2a.push_done(push.id, self._clock.now())
