"""One Matrix bot user (the account, named by its user id ``@name:server``): its HTTP session
to the homeserver named in the settings, and its access token, never captured: read from the
store before each call and each ``/sync``, so a token rotated with ``parley channel account
token`` is used by the very next call, and a token taken away ends the session. Its live phase
is reported to the account states."""

from __future__ import annotations

from datetime import timedelta

import aiohttp
from mautrix.client import ClientAPI
from mautrix.types import UserID

from parley.channels.connected import AccountPhase, AccountStates
from parley.channels.matrix.failures import MatrixHTTP
from parley.channels.matrix.refs import MATRIX, is_user_id
from parley.clock import Clock
from parley.errors import Forbidden
from parley.settings import MatrixSettings
from parley.store import Store


class MatrixAccount:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        account_id: str,
        settings: MatrixSettings,
        states: AccountStates,
    ) -> None:
        self.store, self.clock, self.account_id = store, clock, account_id
        self.settings, self.states = settings, states
        self._session: aiohttp.ClientSession | None = None

    async def token(self) -> str | None:
        async with self.store.transaction() as tx:
            return await tx.channels.token_of(MATRIX, self.account_id)

    async def client(self) -> ClientAPI:
        """A client holding the newest token, for the call to come; Forbidden (final) without
        one."""
        token = await self.token()
        if token is None:
            raise Forbidden(
                f"matrix account {self.account_id!r} has no token: set one with"
                f" 'parley channel account token matrix {self.account_id} --file FILE'"
            )
        return self.client_with(token)

    def client_with(self, token: str) -> ClientAPI:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
        api = MatrixHTTP(
            self.settings.homeserver_url, token, client_session=self._session, default_retry_count=0
        )
        # mautrix parses the id it is given: an account named otherwise is refused at whoami.
        mxid = self.account_id if is_user_id(self.account_id) else ""
        return ClientAPI(UserID(mxid), api=api)

    def report(self, phase: AccountPhase, error: str | None = None) -> None:
        self.states.set(MATRIX, self.account_id, phase, error)

    def rate_limited(self, seconds: float) -> None:
        until = self.clock.now() + timedelta(seconds=seconds)
        self.states.rate_limited(MATRIX, self.account_id, until)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
