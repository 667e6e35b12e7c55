"""The Socket Mode manager of one Slack account: its Web API clients, its websocket session
kept open, its identity in the workspace, and its two tokens. It is made once per account and
reused; the tokens are never captured: the bot token is read from the store before each Web API
call and both before each session, so tokens rotated with ``parley channel account token`` are
used by the very next call, and a secret taken away ends the session.

A session: ``auth.test`` with the bot token (who the bot is; a refused token is the account's
``refused`` phase), ``apps.connections.open`` with the app-level token (the websocket's URL,
from the settings' Web API address, so a fake on loopback is reached), the socket, until Slack
closes it, asks for a new one (a ``disconnect`` envelope) or the secret is taken away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta

from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.web.async_client import AsyncWebClient

from parley.channels.connected import AccountPhase, AccountStates, reconnecting
from parley.channels.slack.failures import speaking_to_slack
from parley.channels.slack.refs import SLACK, tokens
from parley.channels.slack.socket import ParleySocket, RequestHandler
from parley.clock import Clock
from parley.errors import Forbidden, ParleyError, Unauthorized, Unavailable
from parley.settings import SlackSettings
from parley.store import Store

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0  # seconds for the websocket's handshake (slack_sdk retries it for ever)


@dataclass(frozen=True)
class Identity:
    """The bot as ``auth.test`` names it: its user, its bot id, its workspace."""

    user_id: str
    bot_id: str | None
    team_id: str | None


class SlackAccountManager:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        account_id: str,
        settings: SlackSettings,
        states: AccountStates,
    ) -> None:
        self.store, self.clock, self.account_id = store, clock, account_id
        self.settings, self.states = settings, states
        self.identity: Identity | None = None
        self.socket: ParleySocket | None = None
        self.on_request: RequestHandler | None = None  # set by the service: what envelopes do

    async def secret(self) -> str | None:
        """The account's stored secret, if it holds both tokens."""
        async with self.store.transaction() as tx:
            found = await tx.channels.token_of(SLACK, self.account_id)
        return found if found is not None and tokens(found) is not None else None

    async def bot_token(self) -> str:
        secret = await self.secret()
        pair = None if secret is None else tokens(secret)
        if pair is None:
            raise Forbidden(
                f"slack account {self.account_id!r} has no token: set one with"
                f" 'parley channel account token slack {self.account_id} --file FILE'"
            )
        return pair[0]

    def web(self, token: str | None = None) -> AsyncWebClient:
        """A Web API client with ``token``; no retry of its own: a post whose answer was lost
        is the outbox's to try again, after looking whether Slack took it."""
        return AsyncWebClient(token=token, base_url=self.settings.api_base_url, retry_handlers=[])

    @contextlib.asynccontextmanager
    async def speaking(self) -> AsyncIterator[None]:
        """Slack's failures as Parley's, the account's state told of a rate limit or a
        refused token."""
        try:
            async with speaking_to_slack():
                yield
        except Unavailable as exc:
            wait = exc.fields.get("retry_after_seconds")
            if isinstance(wait, float | int):
                until = self.clock.now() + timedelta(seconds=float(wait))
                self.states.rate_limited(SLACK, self.account_id, until)
            raise
        except Unauthorized as exc:
            self.report(AccountPhase.REFUSED, exc.message)
            raise

    async def whoami(self) -> Identity:
        """Who the bot is (asked once; again after a session's ``auth.test``)."""
        if self.identity is None:
            async with self.speaking():
                answer = await self.web(await self.bot_token()).auth_test()
            self.identity = Identity(str(answer["user_id"]), _text(answer.get("bot_id")),
                                     _text(answer.get("team_id")))  # fmt: skip
        return self.identity

    def report(self, phase: AccountPhase, error: str | None = None) -> None:
        self.states.set(SLACK, self.account_id, phase, error)

    async def run(self) -> None:
        """Keep a Socket Mode session open with the newest tokens, until cancelled."""
        await reconnecting(self.secret, self._session, idle=self.settings.accounts_poll_seconds)

    async def _session(self, secret: str) -> bool:
        """One websocket's life; whether it got as far as opening."""
        pair = tokens(secret)
        assert pair is not None
        self.report(AccountPhase.CONNECTING)
        try:
            self.identity = None
            await self.whoami()
            async with self.speaking():
                url = str((await self.web().apps_connections_open(app_token=pair[1]))["url"])
        except Unauthorized:
            log.warning("slack account %r: Slack refused its token", self.account_id)
            return False
        except ParleyError as exc:
            log.warning("slack account %r: not connected: %s", self.account_id, exc.message)
            self.report(AccountPhase.DISCONNECTED, exc.message)
            return False
        except (KeyError, TypeError, ValueError) as exc:  # an answer without what it must have
            log.warning("slack account %r: not connected: %r", self.account_id, exc)
            self.report(AccountPhase.DISCONNECTED, f"Slack answered oddly: {type(exc).__name__}")
            return False
        return await self._open(url, pair[1])

    async def _open(self, url: str, app_token: str) -> bool:
        ended = asyncio.Event()
        socket = self.socket = ParleySocket(app_token, self.web(), self._handler(), ended)
        try:
            socket.wss_uri = url
            await asyncio.wait_for(socket.open(), CONNECT_TIMEOUT)
            self.report(AccountPhase.CONNECTED)
            await self._until_over(socket, ended)
        except Exception as exc:  # whatever ended it, the account connects again
            log.warning("slack account %r disconnected: %s", self.account_id, type(exc).__name__)
            self.report(AccountPhase.DISCONNECTED, f"disconnected: {type(exc).__name__}")
            return False
        finally:
            await asyncio.shield(socket.shut())
        return True

    async def _until_over(self, socket: ParleySocket, ended: asyncio.Event) -> None:
        """Until Slack closes the socket or asks for a new one, or the secret is taken away."""
        while not ended.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), self.settings.accounts_poll_seconds)
            if socket.lost():
                log.info("slack account %r: its socket closed", self.account_id)
                self.report(AccountPhase.DISCONNECTED, "disconnected: the socket closed")
                return
            if not await self._secret_kept():
                log.info("slack account %r: its token was taken away", self.account_id)
                self.report(AccountPhase.NO_SECRET)
                return
        log.info("slack account %r: Slack asked for a new connection", self.account_id)

    async def _secret_kept(self) -> bool:
        try:
            return await self.secret() is not None
        except Unavailable:  # the store away for a moment: the session goes on
            return True

    def _handler(self) -> RequestHandler:
        async def handle(socket: ParleySocket, request: SocketModeRequest) -> None:
            if self.on_request is not None:
                await self.on_request(socket, request)

        return handle

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.shut()


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
