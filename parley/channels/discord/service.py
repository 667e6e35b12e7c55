"""The Discord accounts this server speaks for: a thread-binding manager (and its adapter in the
registry) for each Discord account given a token, kept connected by ``ConnectedAccounts``.
Discord's addresses (REST and gateway) are settings, so that a compatible server, or a fake on
loopback, stands in for Discord."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from parley.channels.connected import AccountStates
from parley.channels.discord.adapter import DiscordAdapter
from parley.channels.discord.client import ParleyBot
from parley.channels.discord.manager import DiscordAccountManager
from parley.clock import Clock
from parley.settings import DiscordSettings
from parley.store import Store


@dataclass(frozen=True)
class DiscordConnection:
    manager: DiscordAccountManager
    adapter: DiscordAdapter

    async def run(self) -> None:
        await self.manager.run()

    async def close(self) -> None:
        await self.manager.close()


def point_at(settings: DiscordSettings) -> None:
    """discord.py reads its addresses from class attributes, shared by every client of the
    process: a server speaks to one Discord, the one its settings name."""
    Route.BASE = settings.api_base_url.rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.gateway_url)


def connector(
    store: Store, clock: Clock, settings: DiscordSettings, states: AccountStates
) -> Callable[[str], DiscordConnection]:
    """What connects one account (``ConnectedAccounts``' ``connect``)."""
    point_at(settings)

    def make_client(manager: DiscordAccountManager) -> discord.Client:
        return ParleyBot(manager, clock, settings.guild_ready_seconds)

    def connect(account_id: str) -> DiscordConnection:
        manager = DiscordAccountManager(store, account_id, settings, make_client, states)
        return DiscordConnection(manager, DiscordAdapter(manager, clock))

    return connect
