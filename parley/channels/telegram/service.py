"""The Telegram accounts this server speaks for: for each account given a token, a manager
long-polling ``getUpdates`` (its listener hearing what comes) and its adapter in the registry,
kept connected by ``ConnectedAccounts``. The Bot API's address is a setting
(``channels.telegram.api_base_url``), so that a local telegram-bot-api server, or a fake on
loopback, stands in for Telegram."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from parley.channels.connected import AccountStates
from parley.channels.telegram.adapter import TelegramAdapter
from parley.channels.telegram.listener import Listener
from parley.channels.telegram.manager import TelegramAccountManager
from parley.clock import Clock
from parley.settings import TelegramSettings
from parley.store import Store


@dataclass(frozen=True)
class TelegramConnection:
    manager: TelegramAccountManager
    adapter: TelegramAdapter

    async def run(self) -> None:
        await self.manager.run()

    async def close(self) -> None:
        await self.manager.close()


def connector(
    store: Store, clock: Clock, settings: TelegramSettings, states: AccountStates
) -> Callable[[str], TelegramConnection]:
    """What connects one account (``ConnectedAccounts``' ``connect``)."""

    def connect(account_id: str) -> TelegramConnection:
        manager = TelegramAccountManager(store, clock, account_id, settings, states)
        manager.listener = Listener(manager).update
        return TelegramConnection(manager, TelegramAdapter(manager, clock))

    return connect
