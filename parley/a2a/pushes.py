"""A2A push notifications, through Parley's outbox: each state a task reaches is one outbox item
per push config (its key: the config, the task, the run it follows, the state — so a change is
pushed once however often it is seen, and a state reached again in a later turn of a continued
task once more), sent by the outbox worker with its retries and backoff. The URL is checked
when the config is set and again before each send (a name may resolve elsewhere later): one
that resolves to a loopback, private, link-local, reserved or metadata address (169.254.169.254)
is refused, unless an owner allowed its host (``a2a_push_allowed_hosts``). A send goes to the
address its check passed (``parley/outbound.py``), never to a second resolution of the name."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import ClassVar

import httpx
from a2a.types.a2a_pb2 import StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict

from parley.a2a.model import PushConfig
from parley.a2a.tasks import TERMINAL, as_task, now_of
from parley.clock import Clock
from parley.deliveries.model import Payload
from parley.errors import Invalid, Unavailable
from parley.outbound import (
    DEFAULT_PORTS,
    Guard,
    InsideRefused,
    Resolver,
    Unresolved,
    checked_addresses,
    resolved,
)
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


async def check_push_url(
    url: str, allowed_hosts: Sequence[str], resolve: Resolver = resolved
) -> None:
    """Invalid unless ``url`` is one Parley may push to."""
    try:
        await checked_addresses(_parsed(url), allowed_hosts, resolve)
    except (InsideRefused, Unresolved) as refused:
        raise _inside(url, refused) from None


def _parsed(url: str) -> httpx.URL:
    said = f"push URL {url[:200]!r}: an http(s) URL of at most {MAX_URL} characters"
    if len(url) > MAX_URL or "\x00" in url:
        raise Invalid(said)
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise Invalid(said) from None
    if parsed.scheme not in DEFAULT_PORTS or not parsed.raw_host:
        raise Invalid(said)
    return parsed


def _inside(url: str, refused: httpx.ConnectError) -> Invalid:
    return Invalid(
        f"push URL {url[:200]!r}: {refused}; Parley does not push there"
        " (an owner may allow the host: a2a_push_allowed_hosts)"
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
        # No connection kept between pushes: kept by address, one verified for a name would
        # carry the push of another name at that address, unverified.
        self._http = ClientOnFirstUse(
            timeout=self.timeout,
            transport=transport,
            limits=httpx.Limits(max_keepalive_connections=0),
            event_hooks={"request": [Guard(self._allowed, resolve).pin]},
        )

    async def send(self, payload: PushNotice, idempotency_key: str) -> None:
        headers = {"Content-Type": "application/json", "X-A2A-Notification-Id": idempotency_key}
        if payload.token:
            headers["X-A2A-Notification-Token"] = payload.token
        if payload.auth_scheme and payload.auth_credentials:
            headers["Authorization"] = f"{payload.auth_scheme} {payload.auth_credentials}"
        url = _parsed(payload.url)
        try:
            response = await self._http.http.post(url, content=payload.body, headers=headers)
        except (InsideRefused, Unresolved) as refused:  # as when it was set: final
            raise _inside(payload.url, refused) from None
        except httpx.HTTPError as exc:
            raise Unavailable(f"cannot reach {payload.url}: {exc or type(exc).__name__}") from exc
        if response.is_success:
            return
        said = f"{payload.url} answered HTTP {response.status_code}: {redact(response.text)[:200]}"
        if response.status_code >= 500 or response.status_code in (408, 429):
            raise Unavailable(said)
        raise Invalid(said)

    async def undeliverable(self, tx: Tx, clock: Clock, payload: PushNotice, reason: str) -> None:
        # The client reads the task's state with GetTask all the same; the outbox keeps why.
        log.warning("a push notice to %s failed for good: %s", payload.url, reason)

    async def close(self) -> None:
        await self._http.aclose()


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
