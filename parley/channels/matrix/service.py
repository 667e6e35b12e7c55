"""The Matrix accounts this server speaks for: for each account (a bot user, ``@name:server``)
given an access token, its ``/sync`` listener kept going by ``ConnectedAccounts`` and its
adapter in the registry. The homeserver's address is a setting (``homeserver_url``), so a
self-hosted homeserver, or a fake on loopback, is reached as well as matrix.org."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from parley.channels.connected import AccountStates
from parley.channels.matrix.account import MatrixAccount
from parley.channels.matrix.adapter import MatrixAdapter
from parley.channels.matrix.listener import Listener
from parley.clock import Clock
from parley.settings import MatrixSettings
from parley.store import Store


@dataclass(frozen=True)
class MatrixConnection:
    account: MatrixAccount
    listener: Listener
    adapter: MatrixAdapter

    async def run(self) -> None:
        await self.listener.run()

    async def close(self) -> None:
        await self.account.close()


def connector(
    store: Store, clock: Clock, settings: MatrixSettings, states: AccountStates
) -> Callable[[str], MatrixConnection]:
    """What connects one account (``ConnectedAccounts``' ``connect``)."""

    def connect(account_id: str) -> MatrixConnection:
        account = MatrixAccount(store, clock, account_id, settings, states)
        return MatrixConnection(account, Listener(account), MatrixAdapter(account))

    return connect
