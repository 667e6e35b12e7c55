"""Channel accounts kept connected, written once for every chat service: a connection per
account given a secret (made once, reused for the account's life, its adapter registered so the
outbox speaks through it), picked up by a poll when the secret comes later, and the live state
of each (connecting, connected, refused, rate-limited until …) for operators to read.

A channel's package supplies ``connect(account_id) -> AccountConnection``; the connection reads
the account's newest secret from the store itself, before each call or session, so that a
rotated secret is used at once and a secret taken away ends the session."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from parley.channels.model import ChannelAccount
from parley.channels.registry import AdapterRegistry, ChannelAdapter
from parley.clock import Clock
from parley.store import Store
from parley.worker import Worker

log = logging.getLogger(__name__)

FIRST_RETRY, LAST_RETRY = 0.2, 60.0  # seconds between reconnections, doubling


class AccountPhase(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    DISCONNECTED = "disconnected"  # lost; trying again
    REFUSED = "refused"  # the service refused the secret: a new one is needed
    NO_SECRET = "no-token"  # the secret was taken away


@dataclass(frozen=True)
class AccountState:
    phase: AccountPhase
    since: datetime
    last_error: str | None = None
    rate_limited_until: datetime | None = None


class AccountStates:
    """What each connected account is doing now, as its connection reports it (the server's
    memory: a restart starts every account at ``connecting``)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._states: dict[tuple[str, str], AccountState] = {}

    def set(self, channel: str, account_id: str, phase: AccountPhase,
            error: str | None = None) -> None:  # fmt: skip
        """A new phase; an error is kept as the account's last until another replaces it."""
        before = self._states.get((channel, account_id))
        last_error = error if error is not None or before is None else before.last_error
        self._states[(channel, account_id)] = AccountState(phase, self._clock.now(), last_error)

    def failed(self, channel: str, account_id: str, error: str) -> None:
        """A call failed without changing the phase (a refused post, a lost answer)."""
        before = self.of(channel, account_id)
        phase = AccountPhase.CONNECTING if before is None else before.phase
        self.set(channel, account_id, phase, error)

    def rate_limited(self, channel: str, account_id: str, until: datetime) -> None:
        before = self.of(channel, account_id) or AccountState(
            AccountPhase.CONNECTING, self._clock.now()
        )
        self._states[(channel, account_id)] = replace(before, rate_limited_until=until)

    def of(self, channel: str, account_id: str) -> AccountState | None:
        found = self._states.get((channel, account_id))
        if found is None or found.rate_limited_until is None:
            return found
        if found.rate_limited_until <= self._clock.now():
            return replace(found, rate_limited_until=None)
        return found


class AccountConnection(Protocol):
    @property
    def adapter(self) -> ChannelAdapter:
        """What the outbox posts through, for this account."""
        ...

    async def run(self) -> None:
        """Keep the account connected with its newest secret until cancelled."""
        ...

    async def close(self) -> None: ...


async def reconnecting(
    secret: Callable[[], Awaitable[str | None]],
    session: Callable[[str], Awaitable[bool]],
    *,
    idle: float,
    first: float = FIRST_RETRY,
    longest: float = LAST_RETRY,
) -> None:
    """Run ``session`` with the newest secret for ever: again at once after one that got going
    (it answers True), after doubling pauses after ones that did not; while there is no secret,
    look again every ``idle`` seconds."""
    wait = first
    while True:
        given = await secret()
        if given is not None:
            wait = first if await session(given) else min(wait * 2, longest)
        await asyncio.sleep(wait if given is not None else idle)


class ConnectedAccounts(Worker):
    """Started, it looks for accounts of ``channel`` given a secret every ``every`` seconds and
    keeps each connected."""

    def __init__(
        self,
        channel: str,
        store: Store,
        registry: AdapterRegistry,
        connect: Callable[[str], AccountConnection],
        every: float,
    ) -> None:
        # Its first pass after ``every``: the start connects the accounts there are already.
        super().__init__(f"the {channel} accounts' poll", every=every, at_start=False)
        self.channel = channel
        self._store, self._registry, self._connect = store, registry, connect
        self._connections: dict[str, AccountConnection] = {}
        self._running: dict[str, asyncio.Task[None]] = {}

    def connection(self, account_id: str) -> AccountConnection:
        """The account's connection: the one made before, if any (it reads the newest secret)."""
        found = self._connections.get(account_id)
        if found is None:
            found = self._connections[account_id] = self._connect(account_id)
            self._registry.register(self.channel, found.adapter, account_id)
        return found

    async def start_configured(self, accounts: Sequence[ChannelAccount] | None = None) -> None:
        """Connect every account of the channel with a secret that is not running yet, of
        ``accounts`` if given (every channel's, read once by a start), else as stored now."""
        if accounts is None:
            async with self._store.transaction() as tx:
                accounts = await tx.channels.accounts()
        for account in accounts:
            if account.channel == self.channel and account.has_token:
                self._start(account.account_id)

    def _start(self, account_id: str) -> None:
        if account_id not in self._running:
            connection = self.connection(account_id)
            self._running[account_id] = asyncio.create_task(
                connection.run(), name=f"{self.channel} account {account_id}"
            )
            log.info("%s account %r: connecting", self.channel, account_id)

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
        for connection in self._connections.values():
            await connection.close()
        self._running.clear()
