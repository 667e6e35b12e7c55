"""Durable subjects on JetStream: one work-queue stream holds what was sent durably until its
consumer acknowledged it; ``Nats-Msg-Id`` drops what is sent twice within the duplicate window.

Each durable subject ``s`` is stored as ``<stream>.s`` (a namespace apart from core subjects)
and read by one durable pull consumer (whose subject may hold wildcards), acknowledged batch by
batch once the handler returned; the handler is told each message's subject without the
stream's prefix.
Its next batch is fetched while the handler works on one (``PREFETCHED`` batches wait at
most): what arrives meanwhile is at hand when the handler is free, not a fetch's round trip
away — under load the handler is busy most of the time, and that wait was most of what a hop
through the broker added."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DeliverPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.client import JetStreamContext

from parley.broker.gathering import gathered
from parley.broker.port import (
    DEDUP_WINDOW,
    DURABLE_BATCH,
    Delivered,
    DurableHandler,
    Gathering,
)
from parley.broker.redelivery import hand_over
from parley.errors import Invalid, Unavailable
from parley.retrying import retrying

log = logging.getLogger(__name__)

STREAM = "PARLEY_DURABLE"
API_TIMEOUT = 5.0  # seconds for one JetStream request (a store, a consumer's creation)
# Seconds before JetStream gives an unacknowledged batch out again: short, so that a batch a
# killed hub held comes back soon; a live one says it is still at work every third of it.
ACK_WAIT = 5.0
FETCH_WAIT = 2.0  # seconds a pull waits for messages before it is asked again
FIRST_PAUSE, LONGEST_PAUSE = 0.05, 2.0  # seconds between tries while the broker is away
CATCH_UP_POLL = 0.05  # seconds between looks at a consumer's progress while catching up
CONSUMER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
PREFETCHED = 2  # fetched batches waiting for the handler: the fetcher pauses past it
# Seconds a stopping consumer lets a pull under way finish, to give back what it brings: a
# pull cancelled mid-way loses what it had received, which then waits for ACK_WAIT.
GIVE_BACK_GRACE = 0.5


class DurableSubjects:
    def __init__(self, nc: Client, is_closed: Callable[[], bool]) -> None:
        self.stream = STREAM
        self._nc, self._is_closed = nc, is_closed
        self._consumers: set[_Consumer] = set()

    @property
    def js(self) -> JetStreamContext:
        return self._nc.jetstream(timeout=API_TIMEOUT)

    def stored_subject(self, subject: str) -> str:
        return f"{self.stream}.{subject}"

    def sent_subject(self, stored: str) -> str:
        """The subject a stored message was sent on."""
        return stored.removeprefix(f"{self.stream}.")

    async def prepare(self) -> None:
        """Create the stream, or bring an existing one to this configuration."""
        config = StreamConfig(
            name=self.stream,
            subjects=[f"{self.stream}.>"],
            retention=RetentionPolicy.WORK_QUEUE,
            storage=StorageType.FILE,
            duplicate_window=DEDUP_WINDOW,
        )
        try:
            try:
                await self.js.add_stream(config)
            except nats.js.errors.BadRequestError:  # it exists, configured otherwise
                await self.js.update_stream(config)
        except nats.errors.Error as exc:
            raise Unavailable(
                f"the broker has no usable JetStream (run nats-server with -js): {exc}"
            ) from exc

    async def send(self, subject: str, data: bytes, message_id: str) -> None:
        """Returns once stored; tries again while the broker is away (the message id makes a
        second try that reached the broker a duplicate, dropped)."""
        headers = {"Nats-Msg-Id": message_id}
        stored = self.stored_subject(subject)

        async def attempt() -> None:
            if self._is_closed():
                raise Unavailable("the broker is closed")  # not tried again
            try:
                await self.js.publish(stored, data, headers=headers)
            except (nats.errors.MaxPayloadError, nats.js.errors.BadRequestError) as exc:
                raise Invalid(f"the broker refused a message on {subject}: {exc}") from exc
            except nats.js.errors.NoStreamResponseError:
                with contextlib.suppress(Exception):  # a broker that lost its store
                    await self.prepare()
                raise

        await retrying(
            attempt,
            what=f"storing on {subject}",
            first=FIRST_PAUSE,
            longest=LONGEST_PAUSE,
            on=(nats.errors.Error,),
            logger=log,
            level=logging.DEBUG,
        )

    async def consume(
        self, subject: str, name: str, handler: DurableHandler, gathering: Gathering | None
    ) -> _Consumer:
        if not CONSUMER_NAME.fullmatch(name):
            raise Invalid(f"a consumer name is 1-64 letters, digits, - or _; not {name!r}")
        consumer = _Consumer(self, subject, name, handler, gathering)
        await consumer.bind()
        consumer.start()
        self._consumers.add(consumer)
        return consumer

    def forget(self, consumer: _Consumer) -> None:
        self._consumers.discard(consumer)

    async def close(self) -> None:
        for consumer in list(self._consumers):
            await consumer.unsubscribe()


class _Consumer:
    def __init__(
        self,
        subjects: DurableSubjects,
        subject: str,
        name: str,
        handler: DurableHandler,
        gathering: Gathering | None = None,
    ) -> None:
        self._subjects, self._subject, self._name = subjects, subject, name
        self._handler, self._gathering = handler, gathering
        self._pull: JetStreamContext.PullSubscription | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._fetched: asyncio.Queue[list[Msg]] = asyncio.Queue(PREFETCHED)
        self._unhandled: list[Msg] = []  # fetched, not yet acknowledged: waiting or handled
        self._pulling: asyncio.Future[list[Msg]] | None = None  # the pull under way
        # The last delivery that reached this consumer, by the server's count of deliveries to
        # it (0: none since it bound): a stop compares it with the server's own last.
        self._received = 0
        self._stopping = False

    async def bind(self) -> None:
        """Create the durable consumer (or find it as it was) and pull from it."""
        subjects = self._subjects
        config = ConsumerConfig(
            durable_name=self._name,
            filter_subject=subjects.stored_subject(self._subject),
            deliver_policy=DeliverPolicy.ALL,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=ACK_WAIT,
            max_deliver=-1,
        )
        try:
            await subjects.js.add_consumer(subjects.stream, config)
        except nats.js.errors.BadRequestError as exc:
            raise Invalid(
                f"{self._subject} cannot be consumed as {self._name!r}: {exc.description}"
            ) from exc
        except nats.errors.Error as exc:
            raise Unavailable(f"the broker did not make consumer {self._name!r}: {exc}") from exc
        old, self._pull = (
            self._pull,
            await subjects.js.pull_subscribe_bind(self._name, subjects.stream),
        )
        self._received = 0  # a consumer made again counts its deliveries from 1 again
        if old is not None:
            with contextlib.suppress(Exception):
                await old.unsubscribe()

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._fetch()), asyncio.create_task(self._work())]

    async def unsubscribe(self) -> None:
        self._subjects.forget(self)
        self._stopping = True  # nats-py's fetch may swallow a cancellation: the loop looks too
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self._finish_pulling()
        # Our pull requests go first: a message given back would go to one still open, lost.
        if self._pull is not None:
            with contextlib.suppress(Exception):
                await self._pull.unsubscribe()
        for msg in self._unhandled:  # given back at once, not after ACK_WAIT
            with contextlib.suppress(Exception):
                await msg.nak()

    async def caught_up(self) -> None:
        """The subject's newest stored message (stored ones are those not yet acknowledged: a
        work queue drops what was), then until the consumer's acknowledgement floor passed it.
        Tried again while the broker is away."""
        js, stream = self._subjects.js, self._subjects.stream
        pause = FIRST_PAUSE
        newest: int | None = None
        while True:
            try:
                if newest is None:
                    newest = (await js.get_last_msg(stream, self._stored_subject)).seq or 0
                floor = (await js.consumer_info(stream, self._name)).ack_floor
                if floor is not None and (floor.stream_seq or 0) >= newest:
                    return
                pause = CATCH_UP_POLL
            except nats.js.errors.NotFoundError:
                return  # nothing stored: nothing to wait for
            except nats.errors.Error as exc:
                log.debug("consumer %s: %s while catching up; again", self._name, exc)
                pause = min(pause * 2, LONGEST_PAUSE)
            await asyncio.sleep(pause)

    @property
    def _stored_subject(self) -> str:
        return self._subjects.stored_subject(self._subject)

    async def _fetch(self) -> None:
        pause = FIRST_PAUSE
        while not self._stopping:
            assert self._pull is not None
            # Shielded: a stop lets it finish (see _finish_pulling) rather than lose its catch.
            self._pulling = asyncio.ensure_future(
                self._pull.fetch(DURABLE_BATCH, timeout=FETCH_WAIT)
            )
            try:
                batch = await asyncio.shield(self._pulling)
            except TimeoutError:  # nats-py's own, or asyncio's plain one (it raises both)
                continue
            except Exception as exc:  # the broker is away, or lost the consumer; or a bug of
                # nats-py: the consumer must outlive it, else ends wait unrecorded for good
                log.debug("consumer %s: %r; binding again", self._name, exc)
                await asyncio.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)
                with contextlib.suppress(Exception):
                    await self._rebind()
                continue
            pause = FIRST_PAUSE
            if batch:  # empty when the server said its wait was over just in time
                self._received = max(self._received, batch[-1].metadata.sequence.consumer)
                self._unhandled += batch
                await self._fetched.put(batch)

    async def _finish_pulling(self) -> None:
        """The pull under way when the consumer stopped: what it brings within the grace is
        given back with the rest; one still waiting then is cancelled (it had nothing yet, or
        what it had waits for ACK_WAIT)."""
        pulling, self._pulling = self._pulling, None
        if pulling is None:
            return
        # One grace in all: the question to the server is taken out of it, not added to it.
        grace_ends = asyncio.get_running_loop().time() + GIVE_BACK_GRACE
        if not pulling.done() and not await self._pull_brings_nothing():
            left = grace_ends - asyncio.get_running_loop().time()
            await asyncio.wait({pulling}, timeout=max(left, 0))
        if not pulling.done():
            pulling.cancel()
            await asyncio.gather(pulling, return_exceptions=True)
        elif not pulling.cancelled() and pulling.exception() is None:
            known = {id(msg) for msg in self._unhandled}
            self._unhandled += [msg for msg in pulling.result() if id(msg) not in known]

    async def _pull_brings_nothing(self) -> bool:
        """Whether the server has nothing for this consumer's pull under way: nothing waiting
        to be delivered, and every delivery it made already here. Then a stop need not wait for
        it (a consumer idle at a stop, as most are, waited the whole grace). Anything else, or
        no answer within the grace, counts as something on its way. Deliveries are compared,
        not messages held: an acknowledgement sent just before the stop may not be applied yet,
        and the message it acknowledged looked on its way. A message stored in the moment after
        the answer comes back after ACK_WAIT, as one to a cancelled pull."""
        js, stream = self._subjects.js, self._subjects.stream
        try:
            async with asyncio.timeout(GIVE_BACK_GRACE):
                info = await js.consumer_info(stream, self._name)
        except (TimeoutError, nats.errors.Error):
            return False
        delivered = info.delivered.consumer_seq if info.delivered is not None else 0
        return info.num_pending == 0 and delivered <= self._received

    async def _work(self) -> None:
        """Hands what was fetched to the handler, what waits together as one batch (and what
        arrives while more is due, as the consumer's gathering says)."""
        while True:
            batch = await self._fetched.get()
            while not self._fetched.empty() and len(batch) < DURABLE_BATCH:
                batch += self._fetched.get_nowait()
            batch = await gathered(batch, self._gathering, _data, self._arrivals)
            await self._handle(batch)

    async def _arrivals(self, held: int, within: float) -> list[Msg]:
        """The next batch fetched within ``within`` seconds, or nothing. A fetched batch is
        never lost to the wait's end: one that came just then is taken all the same."""
        getter = asyncio.ensure_future(self._fetched.get())
        try:
            await asyncio.wait({getter}, timeout=within)
        finally:
            getter.cancel()  # no-op once it has its batch
            await asyncio.gather(getter, return_exceptions=True)
        return [] if getter.cancelled() else getter.result()

    async def _rebind(self) -> None:
        await self._subjects.prepare()
        await self.bind()

    async def _handle(self, batch: list[Msg]) -> None:
        """The batch handed over, then acknowledged before anything else is awaited: a stop
        that comes once the handler returned finds it acknowledged, not held (given back, it
        was handled a second time by the next consumer)."""
        working = asyncio.create_task(self._still_working())
        try:
            delivered = [Delivered(self._subjects.sent_subject(m.subject), m.data) for m in batch]
            await hand_over(self._handler, delivered, self._subject)
            await _acknowledge(batch)
            handled = {id(msg) for msg in batch}
            self._unhandled = [msg for msg in self._unhandled if id(msg) not in handled]
        finally:
            working.cancel()
            await asyncio.gather(working, return_exceptions=True)

    async def _still_working(self) -> None:
        """Keeps the batch in the handler's hands, and those fetched behind it, from being
        given out again while the handler works (or retries)."""
        while True:
            await asyncio.sleep(ACK_WAIT / 3)
            for msg in list(self._unhandled):
                with contextlib.suppress(Exception):
                    await msg.in_progress()


def _data(msg: Msg) -> bytes:
    return msg.data


async def _acknowledge(batch: list[Msg]) -> None:
    """Sent without waiting for the broker's answer: the next batch is handled meanwhile. A
    lost acknowledgement means the batch comes again (handlers are idempotent)."""
    try:
        for msg in batch:
            await msg.ack()
    except nats.errors.Error as exc:
        log.warning("acknowledging %d messages failed (%s); they may come again", len(batch), exc)
