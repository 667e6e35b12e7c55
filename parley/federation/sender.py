"""The outbox route for wire frames. Loops per connection with frames to send (``in_flight``
of them, so that as many batches may be out at once): each claims the connection's due frames
in (thread, seq) order (a frame behind an earlier one of its thread that waits, or is out in
another batch, is left: a waiting thread holds up only itself, and every thread's frames go in
order) — all of them up to a batch, or, while other loops are idle, its share of them, so that
batches overlap — posts them as ONE batch, and settles every verdict in one transaction —
accepted or duplicate: delivered (in one statement); rejected: failed for good, with a notice to the
sending role in its conversation, and our side of a thread the peer will take no more text in
is closed (see ``THREAD_ENDING`` and ``federation/failures.py``). A transport failure puts the
whole batch back with backoff and jitter, recorded on the connection for ``connection list``.
A text the peer finds from the future (a gap in its thread: it lacks what came before) is not
final: the thread's text from the seq the peer expects goes again, later each time, and the
thread is parked should the peer keep asking (``federation/parking.py``). A claim's lease is
short and renewed while its batch is out, so that what a killed sender had claimed goes again
soon after a restart; the backoff of a peer away is capped low, so that traffic resumes within
seconds of its return. Few requests are in flight
per connection: httpx stays at what it does well. A paused or revoked connection sends
nothing; a peer that says it revoked the connection (401, reason ``revoked``) did so for good,
and so it is here too; any other 401 is retried like an outage (a peer restored from an old
backup, a proxy in front of it)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta

from parley.clock import Clock
from parley.conversations.agent_conversations import Refusal
from parley.deliveries.backoff import Backoff
from parley.deliveries.deliverers import Fate
from parley.deliveries.model import Delivery
from parley.errors import Invalid, ParleyError, Unauthorized
from parley.federation.a2a_peer import A2APeer
from parley.federation.failures import (
    FrameFate,
    close_our_side,
    refused_by_peer,
    revoked_by_peer,
)
from parley.federation.frames import (
    CloseFrame,
    DroppedFrame,
    FrameVerdict,
    TextFrame,
    Verdict,
    WireFrame,
)
from parley.federation.lifecycle import end_for_good
from parley.federation.model import (
    A2A,
    REVOKED,
    ConnectionState,
    Outbound,
    OutboundClose,
    OutboundDropped,
    OutboundText,
    PeerEndpoint,
    outbound_of,
)
from parley.federation.parking import resend_delay, resend_reason
from parley.federation.peer_client import PeerClient
from parley.reasons import kept, stored_reason, with_code
from parley.store import Store, Tx
from parley.worker import Worker

log = logging.getLogger(__name__)

# A claim's lease, renewed every third of it while its batch is out: a sender killed with a
# batch out leaves its frames claimed this long at most.
LEASE = timedelta(seconds=10)
# A peer away: tried again after at most this (jittered), so that its return is seen soon.
OUTAGE_BACKOFF = Backoff(base_seconds=0.5, cap_seconds=5.0)
IDLE_CHECK_SECONDS = 30.0  # a loop with nothing due looks again this often, should a wake be lost
ERROR_PAUSE_SECONDS = 1.0
# Fewest frames a loop takes as its share of what is due (see ``_share``): below it, one batch.
MIN_SHARE = 16


class FederationSender:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        peers: PeerClient,
        batch: int,
        backoff: Backoff = OUTAGE_BACKOFF,
        in_flight: int = 1,
        lease: timedelta = LEASE,
        fate: Fate[Outbound] | None = None,
        a2a: A2APeer | None = None,
    ) -> None:
        """``batch``: most frames in one batch; ``in_flight``: batches out at once per
        connection (each of other threads: a thread's claimed frame holds up its later ones);
        ``fate``: what becomes of a frame failed for good (the deliveries registry's)."""
        self._store, self._clock, self._peers, self._batch = store, clock, peers, batch
        self._backoff = backoff
        self._in_flight = in_flight
        self.lease = lease
        self._fate = fate or FrameFate()
        self._a2a = a2a  # the connections to A2A agents: their frames go as A2A messages
        self._out: dict[int, int] = {}  # frames in a batch that is out, with their batches' count
        self.name = f"federation-{secrets.token_hex(6)}"
        self._loops: dict[str, list[_ConnectionLoop]] = {}  # a connection's: ``in_flight``
        self._posting: dict[str, int] = {}  # by connection: its loops with a batch out
        self._renewal = _LeaseRenewal(self)
        self._stopped = False

    async def start(self) -> None:
        """Resume what a previous process left to send."""
        async with self._store.transaction() as tx:
            waiting = await tx.frames.connections_pending()
        for connection in waiting:
            self.wake(connection)
        await self._renewal.start()

    async def stop(self) -> None:
        self._stopped = True  # a commit acted on while stopping starts no new loop
        for loop in [self._renewal, *(each for loops in self._loops.values() for each in loops)]:
            await loop.stop()
        self._loops.clear()

    async def on_commit(self, effects: object) -> None:
        for connection in getattr(effects, "frames", ()):
            self.wake(connection)

    def wake(self, connection: str) -> None:
        """Every busy loop of ``connection`` looks again when it is done, and one idle loop
        looks now: a loop that finds more due than its share wakes the next (``send_due``).
        Waking every idle loop at once had all but one claim nothing, each a transaction run
        while the one that claimed posted its batch."""
        if self._stopped:
            return
        loops = self._loops.get(connection)
        if loops is None:  # the connection's loops, one per batch it may have out at once
            loops = self._loops[connection] = [
                _ConnectionLoop(self, connection, n) for n in range(self._in_flight)
            ]
            for loop in loops:
                loop.start_soon()
        first_idle = next((loop for loop in loops if not loop.busy), None)
        for loop in loops:
            if loop.busy or loop is first_idle:
                loop.wake()

    async def send_due(self, connection: str) -> float | None:
        """Send one batch of what is due; seconds until the loop should look again."""
        now = self._clock.now()
        async with self._store.transaction() as tx:
            peer = await tx.connections.endpoint(connection)
            status = await tx.connections.by_name(connection)
            if peer is None or status is None or status.state is not ConnectionState.ACTIVE:
                return None  # paused (unpausing restarts nothing: new sends wake us) or revoked
            if status.retry_at is not None and status.retry_at > now:
                return self._seconds_until(status.retry_at)
            limit, more = await self._share(tx, connection, now)
            items = await tx.frames.claim(connection, self.name, now, now + self.lease, limit)
            next_due = None if items else await tx.frames.next_due(connection)
        if not items:
            return self._seconds_until(next_due)
        if more:  # the rest is an idle loop's
            self.wake(connection)
        self._posting[connection] = self._posting.get(connection, 0) + 1
        ids = [item.id for item in items]
        for item_id in ids:
            self._out[item_id] = self._out.get(item_id, 0) + 1
        try:
            return await self._post(peer, items)
        finally:
            self._posting[connection] -= 1
            for item_id in ids:
                if self._out[item_id] == 1:
                    del self._out[item_id]
                else:
                    self._out[item_id] -= 1

    async def renew_leases(self) -> None:
        """Extend the claims of the frames whose batch is out."""
        if self._out:
            async with self._store.transaction() as tx:
                until = self._clock.now() + self.lease
                await tx.frames.extend(list(self._out), self.name, until)

    async def _share(self, tx: Tx, connection: str, now: datetime) -> tuple[int, bool]:
        """How many due frames this loop takes, and whether more are due than that: up to a
        batch while the connection's other loops have batches out; else its share of what is
        due with the idle ones, so that batches overlap — while the peer applies one, the
        verdicts of another come back and the texts behind them are written and claimed."""
        idle = self._in_flight - self._posting.get(connection, 0)
        if idle <= 1:
            return self._batch, False
        due = await tx.frames.count_due(connection, now, up_to=self._batch)
        share = min(self._batch, max(MIN_SHARE, -(-due // idle)))
        return share, due > share

    async def _post(self, peer: PeerEndpoint, items: Sequence[Delivery]) -> float | None:
        frames = [outbound_of(item.payload) for item in items]
        try:
            if peer.kind == A2A and self._a2a is not None:
                verdicts = await self._a2a.send(peer, frames)
            else:
                verdicts = await self._peers.send(peer, [_wire(frame) for frame in frames])
        except Invalid as exc:  # the peer refused the batch as a whole: no retry changes that
            refused = f"{peer.name} refused the batch: {stored_reason(exc)}"
            refused = with_code(Refusal.INVALID.value, refused)
            await self._settle_refused(items, frames, refused)
            return 0.0
        except Unauthorized as exc:
            if exc.fields.get("reason") != REVOKED:  # a peer restored, misconfigured: may pass
                return await self._retry(peer, items, stored_reason(exc))
            await self._revoked_by_peer(peer, stored_reason(exc))  # so is ours, for good
            return None
        except (ParleyError, TimeoutError, OSError) as exc:
            return await self._retry(peer, items, stored_reason(exc))
        await self._settle(peer, items, frames, verdicts)
        return 0.0

    def _seconds_until(self, at: datetime | None) -> float:
        if at is None:
            return IDLE_CHECK_SECONDS
        return max((at - self._clock.now()).total_seconds(), 0.0)

    async def _settle(
        self,
        peer: PeerEndpoint,
        items: Sequence[Delivery],
        frames: Sequence[Outbound],
        verdicts: Sequence[FrameVerdict],
    ) -> None:
        now = self._clock.now()
        settled = list(zip(items, frames, verdicts, strict=True))
        taken = [item.id for item, _, v in settled if v.final_verdict is Verdict.ACCEPTED]
        async with self._store.transaction() as tx:
            await tx.connections.contacted(peer.connection_id, now)
            await tx.outbox.delivered_many(taken, self.name, now)
            for item, frame, verdict in settled:
                if verdict.final_verdict is Verdict.ACCEPTED:
                    continue
                if await self._resent(tx, item, frame, verdict, now):
                    continue
                await self._fail(tx, item, frame, kept(_refused(frame, verdict)))
                if _ends_thread(frame, verdict):
                    closing = f"refused by {frame.connection}: {verdict.reason or 'rejected'}"
                    await close_our_side(tx, now, [frame.topic_id], closing)

    async def _resent(
        self, tx: Tx, item: Delivery, frame: Outbound, verdict: FrameVerdict, now: datetime
    ) -> bool:
        """A text from the future for the peer (it lacks the thread's text from
        ``expected_seq``: restored from a backup, or that text is on its way): the thread's text
        from there goes again, later each time (parked past a few), this one after it. False if
        some of it failed here: the gap is for good."""
        if not _is_gap(frame, verdict):
            return False
        assert verdict.expected_seq is not None and isinstance(frame, OutboundText)
        resends = await tx.frames.resent(item.id, self.name)
        if resends is None:
            return True  # another sender holds it now: its verdict is that one's to settle
        at = now + resend_delay(resends)
        if not await tx.frames.send_again(
            frame.connection, frame.topic_id, verdict.expected_seq, frame.seq, at
        ):
            return False
        reason = resend_reason(verdict.expected_seq, resends)
        await tx.outbox.retry_at(item.id, self.name, at, kept(reason))
        if resends > 1:
            log.info("thread %s to %s waits: %s", frame.thread_id, frame.connection, reason)
        return True

    async def _settle_refused(
        self, items: Sequence[Delivery], frames: Sequence[Outbound], reason: str
    ) -> None:
        """Each frame failed: its thread now has a gap in its seq, so it is closed here too."""
        async with self._store.transaction() as tx:
            for item, frame in zip(items, frames, strict=True):
                await self._fail(tx, item, frame, reason)
            closing = f"refused by {frames[0].connection}: {reason}"
            texts = [f.topic_id for f in frames if isinstance(f, OutboundText)]
            await close_our_side(tx, self._clock.now(), texts, closing)

    async def _fail(self, tx: Tx, item: Delivery, frame: Outbound, reason: str) -> None:
        if await tx.outbox.failed(item.id, self.name, reason):  # else another sender has it
            await self._fate.undeliverable(tx, self._clock, frame, reason)

    async def _revoked_by_peer(self, peer: PeerEndpoint, reason: str) -> None:
        async with self._store.transaction() as tx:
            connection = await tx.connections.lock(peer.connection_id)
            if connection is not None and connection.state is not ConnectionState.REVOKED:
                log.warning("%s revoked the connection: %s", peer.name, reason)
                await end_for_good(tx, self._clock.now(), connection, revoked_by_peer(peer.name))

    async def _retry(self, peer: PeerEndpoint, items: Sequence[Delivery], reason: str) -> float:
        async with self._store.transaction() as tx:
            status = await tx.connections.by_name(peer.name)
            failures = (status.failures if status else 0) + 1
            at = self._clock.now() + self._backoff.delay(failures)
            await tx.connections.unreachable(peer.connection_id, at, reason)
            for item in items:
                await tx.outbox.retry_at(item.id, self.name, at, reason)
        log.info("frames to %s wait: %s (again at %s)", peer.name, reason, at.isoformat())
        return self._seconds_until(at)


class _ConnectionLoop(Worker):
    """One of a connection's loops: a pass sends one batch of what is due; busy from when it is
    woken until it has sent what it found (or found nothing). The store away, or a bug: logged,
    and it looks again in a moment."""

    def __init__(self, sender: FederationSender, connection: str, n: int) -> None:
        name = f"{sender.name} to {connection} #{n}"
        super().__init__(
            name,
            at_start=False,
            first_pause=ERROR_PAUSE_SECONDS,
            longest_pause=OUTAGE_BACKOFF.cap_seconds,  # the store back, traffic within seconds
            logger=log,
        )
        self._sender, self._connection = sender, connection
        self.busy = False

    async def one_pass(self) -> float | None:
        self.busy = True
        try:
            return await self._sender.send_due(self._connection)
        finally:
            self.busy = False


class _LeaseRenewal(Worker):
    """Every third of a lease, the claims of the frames whose batch is out are extended; the
    store away: the next round tries again."""

    def __init__(self, sender: FederationSender) -> None:
        every = sender.lease.total_seconds() / 3
        super().__init__(f"{sender.name} leases", every=every, at_start=False, logger=log)
        self._sender = sender

    async def one_pass(self) -> float | None:
        await self._sender.renew_leases()
        return None


# Refusals after which the peer takes no more text in the thread: it is closed there, was never
# opened (its first frame refused), or its roles are not the ones the peer knows.
THREAD_ENDING = {Refusal.THREAD.value, Refusal.UNKNOWN_ROLE.value, Refusal.ROLES.value}


def _ends_thread(frame: Outbound, verdict: FrameVerdict) -> bool:
    if not isinstance(frame, OutboundText):
        return False  # a close: closed here already; a report of dropped text ends nothing
    return frame.seq == 1 or verdict.reason in THREAD_ENDING or verdict.gap


def _is_gap(frame: Outbound, verdict: FrameVerdict) -> bool:
    """The peer lacks text before this one (nothing before it is missing when it expects this
    seq or a later one: a confused peer, whose verdict is final)."""
    if not verdict.gap or not isinstance(frame, OutboundText):
        return False
    return verdict.expected_seq is not None and verdict.expected_seq < frame.seq


def _refused(frame: Outbound, verdict: FrameVerdict) -> str:
    if isinstance(frame, OutboundText):
        return refused_by_peer(frame, verdict)
    return f"{verdict.reason or 'rejected'}: {verdict.detail or ''}".rstrip(": ")


def _wire(frame: Outbound) -> WireFrame:
    if isinstance(frame, OutboundClose):
        return CloseFrame(type="close", thread_id=frame.thread_id, reason=frame.reason)
    if isinstance(frame, OutboundDropped):
        return DroppedFrame(
            type="dropped", thread_id=frame.thread_id, count=frame.count, reason=frame.reason
        )
    return TextFrame(
        type="text",
        thread_id=frame.thread_id,
        seq=frame.seq,
        message_id=frame.message_id,
        from_role=frame.from_role,
        to_role=frame.to_role,
        body=frame.body,
    )
