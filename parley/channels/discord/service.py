"""The Discord accounts this server speaks for: a thread-binding manager (and its adapter in the
registry) for each Discord account given a token, made once and reused for the account's life;
accounts given a token later are picked up by a poll."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import discord

from parley.channels.discord.adapter import DiscordAdapter
from parley.channels.discord.client import ParleyBot
from parley.channels.discord.manager import DiscordAccountManager
from parley.channels.discord.refs import DISCORD
from parley.channels.registry import AdapterRegistry
from parley.clock import Clock
from parley.settings import DiscordSettings
from parley.store import Store
from parley.worker import Worker

log = logging.getLogger(__name__)


class DiscordAccounts(Worker):
    """Started, it looks for accounts given a token every ``accounts_poll_seconds``."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        settings: DiscordSettings,
        registry: AdapterRegistry,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        super().__init__("the Discord accounts' poll", every=settings.accounts_poll_seconds)
        self._store, self._clock, self._settings = store, clock, settings
        self._registry = registry
        self._guild_ready_timeout = guild_ready_timeout
        self._managers: dict[str, DiscordAccountManager] = {}
        self._running: dict[str, asyncio.Task[None]] = {}

    def manager(self, account_id: str) -> DiscordAccountManager:
        """The account's manager: the one made before, if any (it reads the newest token)."""
        found = self._managers.get(account_id)
        if found is None:
            found = DiscordAccountManager(self._store, account_id, self._settings, self._client)
            self._managers[account_id] = found
            self._registry.register(DISCORD, DiscordAdapter(found, self._clock), account_id)
        return found

    def _client(self, manager: DiscordAccountManager) -> discord.Client:
        return ParleyBot(manager, self._clock, self._guild_ready_timeout)

    async def start_configured(self) -> None:
        """Connect every Discord account with a token that is not running yet."""
        async with self._store.transaction() as tx:
            accounts = await tx.channels.accounts()
        for account in accounts:
            if account.channel == DISCORD and account.has_token:
                self._start(account.account_id)

    def _start(self, account_id: str) -> None:
        if account_id not in self._running:
            manager = self.manager(account_id)
            self._running[account_id] = asyncio.create_task(manager.run())
            log.info("discord account %r: connecting", account_id)

    async def one_pass(self) -> float | None:
        await self.start_configured()
        return None

    async def stop(self) -> None:
        await super().stop()
        for task in self._running.values():
            task.cancel()
        for task in self._running.values():
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for manager in self._managers.values():
            await manager.close()
        self._running.clear()
