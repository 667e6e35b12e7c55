"""The Broker over NATS: core NATS for fire-and-forget subjects, JetStream for durable ones
(``nats_durable``). The only modules that know nats-py are ``mesh/nats*.py``.

The connection is made once at start (an unreachable or refusing broker is an error then) and
kept forever after: nats-py reconnects by itself, and ``state()`` tells how it is going."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl

import nats.errors
from nats.aio.client import Client, RawCredentials
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription as NatsSubscription

from parley.errors import ERRORS_BY_CODE, ParleyError, Unavailable
from parley.mesh.broker import (
    BrokerState,
    DurableHandler,
    DurableSubscription,
    Gathering,
    Handler,
    Status,
    SubjectHandler,
)
from parley.mesh.nats_durable import DurableSubjects
from parley.mesh.nats_url import NatsAddress, parse_nats_url
from parley.redact import redact

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5.0  # seconds to reach the broker at start, all tries included
RECONNECT_WAIT = 1  # seconds between tries to reach it again later
# A request's listener failed: the reply carries the error's code and message.
ERROR_CODE, ERROR_MESSAGE = "Parley-Error", "Parley-Error-Message"


class NatsBroker:
    def __init__(
        self,
        address: NatsAddress,
        credentials: str | None = None,
        inbox_prefix: str | None = None,
    ) -> None:
        self._address = address
        self._credentials = credentials
        self._inbox_prefix = inbox_prefix
        self._nc = Client()
        self._status: Status = "reconnecting"
        self._last_error: str | None = None
        self._closing = False
        self._durable = DurableSubjects(self._nc, self._is_closed)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        timeout: float = CONNECT_TIMEOUT,
        stream: str | None = None,
        credentials: str | None = None,
        inbox_prefix: str | None = None,
    ) -> NatsBroker:
        """Connected, with its JetStream stream in place; Invalid for a bad URL, Unavailable
        when the broker cannot be reached, refuses the credentials or has no JetStream.
        ``credentials``: a ``.creds`` file's text; ``inbox_prefix``: where replies to this
        client's requests come (a node's own, which no other node may read)."""
        broker = cls(parse_nats_url(url), credentials, inbox_prefix)
        if stream is not None:
            broker._durable.stream = stream
        try:
            try:
                await asyncio.wait_for(broker._connect(), timeout)
            except TimeoutError:
                why = broker._last_error or "no answer"
                raise Unavailable(
                    f"cannot reach the broker at {broker._address.shown}: {why}"
                ) from None
            await broker._durable.prepare()
        except BaseException:
            await broker.close()
            raise
        return broker

    async def _connect(self) -> None:
        address = self._address
        extra: dict[str, object] = {}
        if self._credentials is not None:
            extra["user_credentials"] = RawCredentials(self._credentials)
        if self._inbox_prefix is not None:
            extra["inbox_prefix"] = self._inbox_prefix
        await self._nc.connect(
            list(address.servers),
            user=address.user,
            password=address.password,
            token=address.token,
            tls=_tls_context() if address.tls else None,
            name="parley",
            allow_reconnect=True,
            max_reconnect_attempts=-1,  # forever: the broker coming back is the normal case
            reconnect_time_wait=RECONNECT_WAIT,
            connect_timeout=2,
            error_cb=self._on_error,
            disconnected_cb=self._on_disconnected,
            reconnected_cb=self._on_reconnected,
            closed_cb=self._on_closed,
            **extra,  # type: ignore[arg-type]
        )
        if address.tls and not self._nc._server_info.get("tls_required"):
            raise Unavailable(f"the broker at {address.shown} does not speak TLS")
        self._status, self._last_error = "connected", None
        log.info("broker connected: %s", address.shown)

    # -- core NATS --

    async def publish(self, subject: str, data: bytes) -> None:
        self._ensure_open()
        try:
            await self._nc.publish(subject, data)
        except nats.errors.OutboundBufferLimitError:
            # Fire and forget: while the broker is away, what overflows nats-py's buffer is lost.
            log.warning("broker away: dropped a message on %s", subject)
        except nats.errors.ConnectionClosedError as exc:
            raise Unavailable("the broker is closed") from exc

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        self._ensure_open()
        try:
            reply = await self._nc.request(subject, data, timeout=timeout)
        except nats.errors.NoRespondersError:
            raise Unavailable(f"nobody listens on {subject}", subject=subject) from None
        except nats.errors.TimeoutError:
            raise Unavailable(
                f"no answer on {subject} within {timeout:g}s", subject=subject
            ) from None
        except nats.errors.Error as exc:
            raise Unavailable(f"the broker failed a request on {subject}: {exc}") from exc
        headers = reply.headers or {}
        if ERROR_CODE in headers:
            error = ERRORS_BY_CODE.get(headers[ERROR_CODE], Unavailable)
            raise error(headers.get(ERROR_MESSAGE, "the listener failed"), subject=subject)
        return reply.data

    async def subscribe(self, subject: str, handler: Handler) -> _CoreSubscription:
        async def without_subject(_subject: str, data: bytes) -> bytes | None:
            return await handler(data)

        return await self.subscribe_with_subject(subject, without_subject)

    async def subscribe_with_subject(
        self, subject: str, handler: SubjectHandler
    ) -> _CoreSubscription:
        self._ensure_open()

        async def deliver(msg: Msg) -> None:
            await self._handle(subject, handler, msg)

        return _CoreSubscription(await self._nc.subscribe(subject, cb=deliver))

    async def _handle(self, subject: str, handler: SubjectHandler, msg: Msg) -> None:
        """nats-py calls this for one subscription's messages one at a time, in order."""
        try:
            reply = await handler(msg.subject, msg.data)
        except ParleyError as exc:
            await self._reply_error(msg, exc)
            return
        except Exception as exc:  # a subscriber's failure must not reach the publisher
            log.exception("handler on %s failed", subject)
            await self._reply_error(msg, Unavailable(f"the listener on {subject} failed: {exc}"))
            return
        if msg.reply and reply is None:
            await self._reply_error(msg, Unavailable(f"the listener on {subject} sent no reply"))
        elif msg.reply and reply is not None:
            with contextlib.suppress(nats.errors.Error):
                await msg.respond(reply)

    async def _reply_error(self, msg: Msg, error: ParleyError) -> None:
        if not msg.reply:
            return
        headers = {ERROR_CODE: error.code, ERROR_MESSAGE: redact(error.message)[:1000]}
        with contextlib.suppress(nats.errors.Error):
            await self._nc.publish(msg.reply, b"", headers=headers)

    # -- JetStream --

    async def send_durable(self, subject: str, data: bytes, message_id: str) -> None:
        self._ensure_open()
        await self._durable.send(subject, data, message_id)

    async def consume(
        self,
        subject: str,
        consumer: str,
        handler: DurableHandler,
        gathering: Gathering | None = None,
    ) -> DurableSubscription:
        self._ensure_open()
        return await self._durable.consume(subject, consumer, handler, gathering)

    # -- the connection --

    def state(self) -> BrokerState:
        return BrokerState("nats", self._status, self._address.shown, self._last_error)

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        await self._durable.close()
        with contextlib.suppress(Exception):
            await self._nc.close()
        self._status = "closed"

    def _is_closed(self) -> bool:
        return self._closing or self._nc.is_closed

    def _ensure_open(self) -> None:
        if self._is_closed():
            raise Unavailable("the broker is closed")

    async def _on_error(self, error: Exception) -> None:
        self._last_error = str(error) or type(error).__name__
        log.debug("broker: %s", self._last_error)

    async def _on_disconnected(self) -> None:
        if not self._closing and self._status == "connected":
            self._status = "reconnecting"
            log.warning("broker %s lost; reconnecting", self._address.shown)

    async def _on_reconnected(self) -> None:
        self._status = "connected"
        log.info("broker %s reconnected", self._address.shown)

    async def _on_closed(self) -> None:
        self._status = "closed"


class _CoreSubscription:
    def __init__(self, subscription: NatsSubscription) -> None:
        self._subscription = subscription

    async def unsubscribe(self) -> None:
        with contextlib.suppress(nats.errors.Error):
            await self._subscription.unsubscribe()


def _tls_context() -> ssl.SSLContext:
    """The system's trust store (``SSL_CERT_FILE`` names another CA file)."""
    return ssl.create_default_context()
