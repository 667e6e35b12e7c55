"""The thread-binding manager of one Discord account: its client, logged in through the gateway
and kept connected, its persona webhooks, and its token. It is made once per account and
reused; the token is never captured: it is read from the store before each REST call, so a
token rotated with ``parley channel account token`` is used by the very next call, and a
gateway session that Discord ends for the old token is opened again with the new one. A token
taken away ends the session."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import discord
from discord.http import HTTPClient

from parley.channels.connected import AccountPhase, AccountStates, reconnecting
from parley.channels.discord.refs import DISCORD
from parley.channels.discord.webhooks import PersonaWebhooks
from parley.errors import Forbidden, Unavailable
from parley.settings import DiscordSettings
from parley.store import Store

log = logging.getLogger(__name__)


class DiscordAccountManager:
    def __init__(
        self,
        store: Store,
        account_id: str,
        settings: DiscordSettings,
        make_client: Callable[[DiscordAccountManager], discord.Client],
        states: AccountStates,
    ) -> None:
        self.store, self.account_id, self.settings = store, account_id, settings
        self.states = states
        self.webhooks = PersonaWebhooks()
        self.client: discord.Client | None = None
        self.commands_synced = False
        self._make_client = make_client

    async def token(self) -> str | None:
        async with self.store.transaction() as tx:
            return await tx.channels.token_of(DISCORD, self.account_id)

    async def connected(self) -> discord.Client:
        """The logged-in client, its HTTP client holding the newest token for the call to come."""
        token = await self.token()
        if token is None:
            raise Forbidden(
                f"discord account {self.account_id!r} has no token: set one with"
                f" 'parley channel account token discord {self.account_id} --file FILE'"
            )
        client = self.client
        if client is None or client.is_closed() or client.user is None:
            raise Unavailable(f"the bot of discord account {self.account_id!r} is not connected")
        http: HTTPClient = client.http
        http.token = token
        return client

    async def run(self) -> None:
        """Keep a client connected with the newest token, until cancelled."""
        await reconnecting(self.token, self._session, idle=self.settings.accounts_poll_seconds)

    def report(self, phase: AccountPhase, error: str | None = None) -> None:
        self.states.set(DISCORD, self.account_id, phase, error)

    async def _session(self, token: str) -> bool:
        """One client's life: logged in, connected until Discord or a rotation ends it; whether
        it got as far as logging in."""
        client = self.client = self._make_client(self)
        logged_in = False
        watching: asyncio.Task[None] | None = None
        self.report(AccountPhase.CONNECTING)
        try:
            await client.login(token)
            logged_in = True
            watching = asyncio.create_task(self._follow_the_token(client))
            await client.connect(reconnect=True)
        except discord.LoginFailure:
            log.warning("discord account %r: Discord refused its token", self.account_id)
            self.report(AccountPhase.REFUSED, "Discord refused the bot's token")
        except Exception as exc:  # whatever ended it, the account connects again
            log.warning("discord account %r disconnected: %s", self.account_id, type(exc).__name__)
            self.report(AccountPhase.DISCONNECTED, f"disconnected: {type(exc).__name__}")
        finally:
            if watching is not None:
                watching.cancel()
            await client.close()
        return logged_in

    async def _follow_the_token(self, client: discord.Client) -> None:
        """Between calls, keep the client's token the newest, so that the gateway resumes or
        identifies again with it; a token taken away ends the session."""
        while (token := await self._token_or_same(client)) is not None:
            http: HTTPClient = client.http
            http.token = token
            await asyncio.sleep(self.settings.accounts_poll_seconds)
        log.info("discord account %r: its token was taken away", self.account_id)
        self.report(AccountPhase.NO_SECRET)
        # Shielded: this watch is cancelled as the session ends, the closing must not be.
        await asyncio.shield(client.close())

    async def _token_or_same(self, client: discord.Client) -> str | None:
        """The newest token; the one in use while the store is away for a moment."""
        try:
            return await self.token()
        except Unavailable:
            return client.http.token

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
