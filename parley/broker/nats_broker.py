"""The Broker over NATS: core NATS for fire-and-forget subjects, JetStream for durable ones
(``nats_durable``). The only modules that know nats-py are ``mesh/nats*.py``.

The connection is made once at start (an unreachable or refusing broker is an error then) and
kept forever after: nats-py reconnects by itself, and ``state()`` tells how it is going."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import math
import ssl
from dataclasses import dataclass

import nats.errors
import nkeys
from nats.aio.client import DEFAULT_INBOX_PREFIX, Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription as NatsSubscription

from parley.broker import nats_jwt
from parley.broker.nats_durable import DurableSubjects
from parley.broker.nats_url import NatsAddress, parse_nats_url
from parley.broker.port import (
    BrokerState,
    Delivered,
    DurableHandler,
    DurableSubscription,
    Gathering,
    Handler,
    Status,
    SubjectHandler,
)
from parley.errors import ERRORS_BY_CODE, ParleyError, Unavailable
from parley.redact import redact

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5.0  # seconds to reach the broker at start, all tries included
RECONNECT_WAIT = 1  # seconds between tries to reach it again later
# A request's listener failed: the reply carries the error's code and message.
ERROR_CODE, ERROR_MESSAGE = "Parley-Error", "Parley-Error-Message"
FIRST = asyncio.FIRST_COMPLETED


class NatsBroker:
    def __init__(
        self,
        address: NatsAddress,
        signer: _Signer | None = None,
        inbox_prefix: str | None = None,
    ) -> None:
        self._address = address
        self._signer = signer
        self._inbox_prefix = inbox_prefix
        self._refused = asyncio.Event()  # the broker said no to these credentials
        self._refusal = ""  # in its words
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
        prepare_stream: bool = True,
    ) -> NatsBroker:
        """Connected, with its JetStream stream in place (unless not ``prepare_stream``: a
        node's credentials may not make it); Invalid for a bad URL or bad ``credentials`` (a
        ``.creds`` text), Unavailable when the broker cannot be reached, refuses the
        credentials or has no JetStream."""
        broker = cls(parse_nats_url(url), signer=_signer(credentials), inbox_prefix=inbox_prefix)
        if stream is not None:
            broker._durable.stream = stream
        try:
            await broker._connect_within(timeout)
            if prepare_stream:
                await broker._durable.prepare()
        except BaseException:
            await broker.close()
            raise
        return broker

    async def _connect_within(self, timeout: float) -> None:
        """Connected, or Unavailable after ``timeout`` — at once when the broker refuses the
        credentials (nats-py would try them again until the timeout)."""
        connecting = asyncio.ensure_future(self._connect())
        refused = asyncio.ensure_future(self._refused.wait())
        try:
            await asyncio.wait({connecting, refused}, timeout=timeout, return_when=FIRST)
        finally:
            refused.cancel()
            if not connecting.done():
                connecting.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await connecting
        if connecting.done() and not connecting.cancelled():
            connecting.result()  # what failed it (not TLS), or nothing
            return
        shown = self._address.shown
        if self._refused.is_set():
            raise Unavailable(
                f"the broker at {shown} refused these credentials ({self._refusal}): check"
                " they were made for this broker and are not revoked"
            )
        raise _unreachable(self._address, self._last_error)

    async def _connect(self) -> None:
        address = self._address
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
            user_jwt_cb=self._signer.user_jwt if self._signer else None,
            signature_cb=self._signer.signature if self._signer else None,
            inbox_prefix=self._inbox_prefix or DEFAULT_INBOX_PREFIX,
        )
        if address.tls and not _server_requires_tls(self._nc, address):
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
        async def bytes_only(message: Delivered) -> bytes | None:
            return await handler(message.data)

        return await self.subscribe_with_subject(subject, bytes_only)

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
            reply = await handler(Delivered(msg.subject, msg.data))
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
        if _is_refusal(error) and self._status != "connected":
            self._refusal = self._last_error
            self._refused.set()
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


@dataclass(frozen=True)
class _Signer:
    """What nats-py calls to answer the server's challenge with a ``.creds`` text: the seed
    stays in this process's memory, never in a file of its own."""

    jwt: str
    key: nkeys.KeyPair

    def user_jwt(self) -> bytes:
        return self.jwt.encode()

    def signature(self, nonce: str) -> bytes:
        return base64.b64encode(self.key.sign(nonce.encode()))


def _signer(credentials: str | None) -> _Signer | None:
    if credentials is None:
        return None
    jwt, seed = nats_jwt.parse_creds(credentials)
    return _Signer(jwt, nats_jwt.key_pair(seed))


def _is_refusal(error: Exception) -> bool:
    """The server's "Authorization Violation" (bad, unknown or revoked credentials)."""
    return isinstance(error, nats.errors.AuthorizationError) or (
        "authorization violation" in str(error).lower()
    )


async def lets_anyone_in(url: str, timeout: float) -> bool:
    """Whether the broker at ``url`` lets a client without any credentials connect (those in
    the URL are left out); one that answers and refuses lets nobody in: False. Unavailable when
    no try reached it within ``timeout``: the hub's own connection, tried next, would wait as
    long again for the same silence (an unreachable broker was told after twice the time)."""
    address = parse_nats_url(url)
    anonymous = Client()
    seen: list[Exception] = []

    async def noted(error: Exception) -> None:
        log.debug("anonymous check: %s", error)
        seen[:] = [error]

    attempt = anonymous.connect(
        list(address.servers),
        tls=_tls_context() if address.tls else None,
        name="parley-anonymous-check",
        allow_reconnect=False,
        connect_timeout=math.ceil(timeout),
        max_reconnect_attempts=0,
        error_cb=noted,
    )
    try:
        await asyncio.wait_for(attempt, timeout)  # nats-py may try an absent server forever
    except TimeoutError as exc:
        raise _unreachable(address, seen[0] if seen else None) from exc
    except (nats.errors.Error, OSError):
        return False
    finally:
        with contextlib.suppress(Exception):
            await anonymous.close()
    return True


def _unreachable(address: NatsAddress, last_error: Exception | str | None) -> Unavailable:
    """What a start says of a broker no try reached (``last_error``: what the last one met)."""
    return Unavailable(f"cannot reach the broker at {address.shown}: {last_error or 'no answer'}")


def _tls_context() -> ssl.SSLContext:
    """The system's trust store (``SSL_CERT_FILE`` names another CA file)."""
    return ssl.create_default_context()


def _server_requires_tls(nc: Client, address: NatsAddress) -> bool:
    """Whether the server said it requires TLS (nats-py's private ``_server_info``, its INFO;
    nats-py otherwise goes on in plain text with a server that does not require it). Where a
    nats-py lacks it, the check cannot be made: said, and the connection kept."""
    info = getattr(nc, "_server_info", None)
    if isinstance(info, dict):
        return bool(info.get("tls_required"))
    log.warning(
        "cannot check that the broker at %s speaks TLS: nats-py's Client has no _server_info"
        " (a nats-py Parley was not tested with; requirements.lock has the tested one)",
        address.shown,
    )
    return True
