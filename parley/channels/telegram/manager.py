"""One Telegram account: its newest token, the bots speaking with it, and the long poll.

The token is never captured: it is read from the store before each call (the bot that sends is
made anew, and checked with ``getMe``, when the token changed) and between long polls (a poll
session ends when the token changed, and a new one starts with the new token; a token taken
away ends it). The poll asks ``getUpdates`` for messages only, one batch after another, each
acknowledging the one before through its offset; an update the library cannot read is skipped
with a log line rather than asked for again for ever."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from telegram import Bot, Update, User, error
from telegram.request import HTTPXRequest

from parley.channels.connected import AccountPhase, AccountStates, reconnecting
from parley.channels.model import ConversationRef
from parley.channels.telegram.failures import retry_after_seconds
from parley.channels.telegram.memory import Recent
from parley.channels.telegram.refs import TELEGRAM
from parley.clock import Clock
from parley.errors import Forbidden
from parley.settings import TelegramSettings
from parley.store import Store
from parley.tls import trusted

log = logging.getLogger(__name__)

READ_MARGIN = 10.0  # seconds a long poll's answer may take beyond its own timeout
IDLE_POLL = 1.0  # seconds between short polls (a poll timeout of 0) that brought nothing
ALLOWED_UPDATES = ["message"]  # edits, channel posts, callbacks and the rest are never asked for

Listener = Callable[[Update], Awaitable[None]]


class ParleyBot(Bot):
    """The library's bot, with getUpdates answered raw: each update is read on its own, so that
    one the library cannot read is skipped (its id still confirmed), not asked for for ever."""

    async def raw_updates(self, asked: dict[str, Any], read_timeout: float) -> Any:
        return await self._post("getUpdates", asked, read_timeout=read_timeout)


class TelegramAccountManager:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        account_id: str,
        settings: TelegramSettings,
        states: AccountStates,
    ) -> None:
        self.store, self.clock, self.account_id = store, clock, account_id
        self.settings, self.states = settings, states
        self.me: User | None = None  # the bot, as getMe last said
        self.listener: Listener | None = None
        self.sent: Recent[str, int] = Recent()  # outbox key (of a part) → message id
        self.threads: Recent[str, ConversationRef] = Recent()  # outbox key → thread made
        self.chains: Recent[tuple[int, int], int] = Recent()  # (chat, message) → chain root
        self.forums: Recent[int, bool] = Recent()  # chat → whether it has topics
        self._bot: Bot | None = None
        self._lock = asyncio.Lock()
        self._offset: int | None = None

    def make_bot(self, token: str) -> ParleyBot:
        base = self.settings.api_base_url.rstrip("/")
        return ParleyBot(
            token,
            base_url=f"{base}/bot",
            base_file_url=f"{base}/file/bot",
            # The library's own defaults, with the CAs read once per process (parley/tls.py),
            # not by each of the bot's two HTTP clients.
            request=_request(),
            get_updates_request=_request(),
        )

    async def token(self) -> str | None:
        async with self.store.transaction() as tx:
            return await tx.channels.token_of(TELEGRAM, self.account_id)

    async def bot(self) -> Bot:
        """The bot that sends, speaking with the newest token (a new one checked with getMe)."""
        token = await self.token()
        if token is None:
            raise Forbidden(
                f"telegram account {self.account_id!r} has no token: set one with"
                f" 'parley channel account token telegram {self.account_id} --file FILE'"
            )
        async with self._lock:
            old = self._bot
            if old is None or old.token != token:
                bot = self.make_bot(token)
                try:
                    await bot.initialize()
                except BaseException:
                    await bot.shutdown()  # its connection, which a refused getMe leaves open
                    raise
                self._bot, self.me = bot, bot.bot
                if old is not None:
                    await old.shutdown()
            assert self._bot is not None
            return self._bot

    def report(self, phase: AccountPhase, error: str | None = None) -> None:
        self.states.set(TELEGRAM, self.account_id, phase, error)

    def rate_limited(self, seconds: float) -> None:
        until = self.clock.now() + timedelta(seconds=seconds)
        self.states.rate_limited(TELEGRAM, self.account_id, until)

    async def run(self) -> None:
        """Long-poll with the newest token, until cancelled."""
        await reconnecting(self.token, self._session, idle=self.settings.accounts_poll_seconds)

    async def _session(self, token: str) -> bool:
        """Poll with ``token`` until it changes or the poll fails; whether getMe took it."""
        bot = self.make_bot(token)
        self.report(AccountPhase.CONNECTING)
        connected = False
        try:
            await bot.initialize()
            self.me, connected = bot.bot, True
            self.report(AccountPhase.CONNECTED)
            while (newest := await self.token()) == token:
                await self._poll_once(bot)
            if newest is None:
                log.info("telegram account %r: its token was taken away", self.account_id)
                self.report(AccountPhase.NO_SECRET)
        except error.InvalidToken:
            log.warning("telegram account %r: Telegram refused its token", self.account_id)
            self.report(AccountPhase.REFUSED, "Telegram refused the bot's token")
            connected = False
        except error.Conflict as exc:
            log.warning("telegram account %r: %s", self.account_id, exc.message)
            self.report(
                AccountPhase.DISCONNECTED, f"another poller or a webhook has the bot: {exc.message}"
            )
            connected = False
        except Exception as exc:  # a network failure, the store away: poll again later
            log.warning("telegram account %r disconnected: %s", self.account_id, type(exc).__name__)
            self.report(AccountPhase.DISCONNECTED, f"disconnected: {type(exc).__name__}")
        finally:
            await bot.shutdown()
        return connected

    async def _poll_once(self, bot: ParleyBot) -> None:
        timeout = self.settings.poll_timeout_seconds
        asked: dict[str, Any] = {"timeout": timeout, "allowed_updates": ALLOWED_UPDATES}
        if self._offset is not None:
            asked["offset"] = self._offset
        try:
            raw = await bot.raw_updates(asked, read_timeout=timeout + READ_MARGIN)
        except error.RetryAfter as exc:
            wait = retry_after_seconds(exc)
            self.rate_limited(wait)
            await asyncio.sleep(wait)
            return
        items = raw if isinstance(raw, list) else []
        for item in items:
            await self._take(bot, item)
        if not items and timeout == 0:
            await asyncio.sleep(IDLE_POLL)  # a short poll answered at once: not a busy loop

    async def _take(self, bot: Bot, item: object) -> None:
        number = item.get("update_id") if isinstance(item, dict) else None
        if not isinstance(number, int) or isinstance(number, bool):
            log.warning("telegram account %r: an update without an id, ignored", self.account_id)
            return
        self._offset = max(self._offset or 0, number + 1)
        assert isinstance(item, dict)
        try:
            update = Update.de_json(item, bot)
        except Exception:  # a forged or unexpected shape: skipped, never asked for again
            log.warning(
                "telegram account %r: update %d unreadable, ignored", self.account_id, number
            )
            return
        if self.listener is not None and update is not None:
            try:
                await self.listener(update)
            except Exception:  # one update's failure must not stop the poll
                log.exception("telegram account %r: update %d failed", self.account_id, number)

    async def close(self) -> None:
        if self._bot is not None:
            await self._bot.shutdown()
            self._bot = None


def _request() -> HTTPXRequest:
    return HTTPXRequest(httpx_kwargs={"verify": trusted()})
