"""The outbox worker: claims due items for a lease, delivers each through the deliverer of its
kind, and settles it. A local kind is delivered in the transaction that marks it delivered
(exactly once, after any restart too); a remote kind is sent between the claim and the
settlement, with its idempotency key. A transient failure puts that one item back with backoff
(``next_attempt_at``) and every other item goes on; a final one fails it for good, visibly.
The worker wakes on every commit that wrote an item, and by itself when the earliest pending
item falls due (a retry, or a claim whose worker died)."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections import deque
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from parley.clock import Clock
from parley.deliveries.backoff import Backoff
from parley.deliveries.deliverers import Deliverers, Route, is_final
from parley.deliveries.model import Delivery
from parley.errors import Invalid, ParleyError, Unavailable
from parley.hub.run_log import REASON_LOGGED
from parley.reasons import stored_reason
from parley.store import Store
from parley.store.effects import Effects
from parley.worker import Worker

log = logging.getLogger(__name__)

BATCH = 100
LEASE = timedelta(seconds=60)
ZERO = timedelta(0)
# While the store itself is unreachable nothing can be claimed: the worker waits this long,
# doubling up to the cap, before it looks again.
STORE_PAUSE_SECONDS, STORE_PAUSE_CAP_SECONDS = 0.5, 30.0
# The least a worker waits for an item already due that it could not claim (another worker's
# transaction holds it on PostgreSQL).
MIN_WAIT_SECONDS = 0.05
# How long a pass waits for one send before letting it go on by itself (its kind's later
# items behind it): items are attempted in claim order, so a completion's thread is made before
# the completion is posted there, unless a destination hangs.
DETACH_SECONDS = 0.5


@dataclass(frozen=True)
class Pass:
    """One pass over the due items: how many were attempted, and when the next one falls due."""

    attempted: int
    next_due: datetime | None


class _Lane:
    """One kind's sends, in claim order, from a task of their own; more of its items may be
    added while it runs."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.items: deque[tuple[Delivery, Route[Any]]] = deque()
        self.due_again: list[datetime | None] = []
        self.task: asyncio.Task[None] | None = None

    def takes_more(self) -> bool:
        """Whether an item added now is still sent by this lane (its task has not ended)."""
        return self.task is not None and not self.task.done()


class OutboxWorker(Worker):
    """Items are attempted in claim order, a remote one's send awaited as long as it is quick;
    a send still out after ``DETACH_SECONDS`` goes on by itself, with its kind's later items
    behind it, while the pass goes on: a destination whose sends hang holds up only its own
    kind, never a subtask's result or any other kind."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        deliverers: Deliverers,
        *,
        backoff: Backoff | None = None,
        lease: timedelta = LEASE,
        name: str | None = None,
    ) -> None:
        # Whose claim an item is under: one name per worker, so a new process never settles
        # an attempt it did not make.
        self.name = name or f"outbox-{secrets.token_hex(6)}"
        super().__init__(
            f"deliveries ({self.name})",
            first_pause=STORE_PAUSE_SECONDS,
            longest_pause=STORE_PAUSE_CAP_SECONDS,
            logger=log,
        )
        self._store, self._clock, self._deliverers = store, clock, deliverers
        self._backoff = backoff or Backoff()
        self._lease = lease
        self._sending: dict[str, _Lane] = {}  # the kinds whose sends went on by themselves

    async def stop(self) -> None:
        await super().stop()
        # What is cut off mid-send stays claimed: due again when its lease passes, same key.
        lanes, self._sending = list(self._sending.values()), {}
        tasks = [lane.task for lane in lanes if lane.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def on_commit(self, effects: Effects) -> None:
        if effects.outbox:
            self.wake()

    async def one_pass(self) -> float | None:
        done = await self.deliver_due(await_sends=False)
        if done.attempted == BATCH:
            return 0.0
        return self._seconds_until(done.next_due)

    def _seconds_until(self, due: datetime | None) -> float | None:
        if due is None:
            return None  # nothing pending: only a commit (or a kind's sends ending) wakes us
        return max((due - self._clock.now()).total_seconds(), MIN_WAIT_SECONDS)

    async def deliver_due(self, await_sends: bool = True) -> Pass:
        """One pass: claim what is due, attempt each item, settle each; when the next item
        falls due. A kind's sends that went on by themselves are awaited unless told not to:
        the worker's loop goes on meanwhile (their lane wakes it when they end); a pass that
        awaits them is whole, as a test or a one-off delivery wants it."""
        claimed, next_due, detached = await self._claim_and_attempt()
        if not await_sends:
            return Pass(claimed, next_due)
        await asyncio.gather(*(lane.task for lane in detached if lane.task is not None))
        due_again = [due for lane in detached for due in lane.due_again]
        return Pass(claimed, min(filter(None, [next_due, *due_again]), default=None))

    async def _claim_and_attempt(self) -> tuple[int, datetime | None, list[_Lane]]:
        """Claim what is due of the kinds not sending by themselves, attempt each in order;
        how many were claimed, when the next item falls due (as far as is known at the end of
        the pass), and the lanes whose sends went on by themselves."""
        now = self._clock.now()
        until = now + self._lease
        busy = sorted(self._sending)
        async with self._store.transaction() as tx:
            items = await tx.outbox.claim_due(self.name, now, until, BATCH, busy)
            later = await tx.outbox.next_due([item.id for item in items], busy)
        due_again: list[datetime | None] = [later]
        detached: dict[str, _Lane] = {}
        for item in items:
            try:
                route = self._deliverers.route(item)
            except Invalid as exc:
                due_again.append(await self._recorded(item, self._fail(item, None, exc), until))
                continue
            if route.local is not None:
                due_again.append(await self._deliver_here(item, route, until))
                continue
            lane = detached.get(item.kind)
            if lane is not None and lane.takes_more():
                lane.items.append((item, route))  # behind its kind's send that hangs
                continue
            lane = self._lane(item.kind, item, route, until)
            assert lane.task is not None
            await asyncio.wait({lane.task}, timeout=DETACH_SECONDS)
            if lane.task.done():
                due_again.extend(lane.due_again)
            else:
                detached[item.kind] = self._sending[item.kind] = lane
        return len(items), min(filter(None, due_again), default=None), list(detached.values())

    def _lane(self, kind: str, item: Delivery, route: Route[Any], until: datetime) -> _Lane:
        lane = _Lane(kind)
        lane.items.append((item, route))

        async def send_in_order() -> None:
            try:
                while lane.items:
                    lane.due_again.append(await self._send(*lane.items.popleft(), until))
            finally:  # before any awaiting caller resumes: its next claim may take this kind
                if self._sending.get(kind) is lane:
                    del self._sending[kind]
                    self.wake()  # the kind's next items, and any retry it scheduled

        lane.task = asyncio.create_task(send_in_order(), name=f"deliveries of {kind}")
        return lane

    async def _deliver_here(
        self, item: Delivery, route: Route[Any], until: datetime
    ) -> datetime | None:
        assert route.local is not None
        try:
            async with self._store.transaction() as tx:
                await route.local.deliver(tx, self._clock, route.payload)
                if not await tx.outbox.delivered(item.id, self.name, self._clock.now()):
                    raise _ClaimLost()
        except _ClaimLost:
            log.info("delivery %s left to the worker that holds it now", item.key)
        except Exception as exc:  # any failure rolled the delivery back: judge it
            return await self._recorded(item, self._settle_failure(item, route, exc), until)
        return None

    async def _send(self, item: Delivery, route: Route[Any], until: datetime) -> datetime | None:
        assert route.remote is not None
        timeout = min(route.remote.timeout, self._lease.total_seconds() / 2)
        try:
            async with asyncio.timeout(timeout):
                await route.remote.send(route.payload, item.key)
        except Exception as exc:
            return await self._recorded(item, self._settle_failure(item, route, exc), until)
        return await self._recorded(item, self._settle_sent(item), until)

    async def _settle_sent(self, item: Delivery) -> None:
        async with self._store.transaction() as tx:
            settled = await tx.outbox.delivered(item.id, self.name, self._clock.now())
        if not settled:  # another worker took it after our lease: its attempt uses the same key
            log.info("delivery %s sent, but another worker holds it now", item.key)

    async def _settle_failure(
        self, item: Delivery, route: Route[Any], error: Exception
    ) -> datetime | None:
        if is_final(error):
            await self._fail(item, route, error)
            return None
        return await self._retry(item, error)

    async def _fail(self, item: Delivery, route: Route[Any] | None, error: Exception) -> None:
        reason = stored_reason(error)
        async with self._store.transaction() as tx:
            if not await tx.outbox.failed(item.id, self.name, reason):
                return
            if route is not None:
                await route.fate.undeliverable(tx, self._clock, route.payload, reason)
        log.warning(
            "delivery %s failed kind=%s attempt=%d error=%s next_attempt=none",
            item.key, item.kind, item.attempts, _quoted(reason),
        )  # fmt: skip

    async def _retry(self, item: Delivery, error: Exception) -> datetime | None:
        reason = stored_reason(error)
        at = self._clock.now() + max(self._backoff.delay(item.attempts), _asked_wait(error))
        async with self._store.transaction() as tx:
            if not await tx.outbox.retry_at(item.id, self.name, at, reason):
                return None
        unexpected = not isinstance(error, ParleyError | TimeoutError)  # a bug: show where
        log.info(
            "delivery %s retrying kind=%s attempt=%d error=%s next_attempt=%s",
            item.key, item.kind, item.attempts, _quoted(reason), at.isoformat(),
            exc_info=error if unexpected else None,
        )  # fmt: skip
        return at

    async def _recorded(
        self, item: Delivery, settling: Awaitable[datetime | None], until: datetime
    ) -> datetime | None:
        """Settle one item. Should that fail (the store is away), the item is left to its lease
        — it falls due again when the lease passes — and the worker goes on with the others."""
        try:
            return await settling
        except Unavailable as exc:
            log.warning("delivery %s unrecorded, due again after its lease: %s", item.key, exc)
        except Exception:
            log.exception("delivery %s unrecorded, due again after its lease", item.key)
        return until


class _ClaimLost(Exception):
    """Another worker holds the item now: roll this delivery back."""


def _quoted(reason: str) -> str:
    """As JSON, like the run log's reasons: one line whatever the reason holds."""
    if len(reason) > REASON_LOGGED:
        reason = reason[:REASON_LOGGED] + "…"
    return json.dumps(reason, ensure_ascii=False)


def _asked_wait(error: Exception) -> timedelta:
    """How long the service asked to be left alone (a rate limit's ``retry_after``), if it did."""
    seconds = error.fields.get("retry_after_seconds") if isinstance(error, Unavailable) else None
    return timedelta(seconds=seconds) if isinstance(seconds, int | float) and seconds > 0 else ZERO
