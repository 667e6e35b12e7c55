"""The account's ``/sync`` long poll, kept going with its newest token (``reconnecting``):
each answer's invites and joined rooms' new events taken in order, and the ``since`` token
kept in memory so that a lost connection resumes where it was.

A batch is taken before its ``next_batch`` is kept: when the store is away midway, the batch
is taken again (its events before the failure may be heard twice; none is lost).

The first sync after the server starts skips history: its ``next_batch`` is kept, its
timeline events are not taken, so what was said before a restart (already heard, or said
while Parley was away) is never taken again as a new turn. Pending invites are taken then too.

An invite is accepted (joined) only when the inviter is a person linked on this account;
others are ignored with a log line."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from mautrix.client import ClientAPI
from mautrix.types import FilterID, RoomID, SyncToken

from parley.channels import hearing
from parley.channels.connected import AccountPhase, reconnecting
from parley.channels.matrix.account import MatrixAccount
from parley.channels.matrix.commands import is_command, run_command
from parley.channels.matrix.failures import speaking_to_matrix
from parley.channels.matrix.inbound import invites, joined_timelines, said
from parley.channels.matrix.refs import MATRIX
from parley.errors import ParleyError, Unauthorized, Unavailable

log = logging.getLogger(__name__)

# The first sync's timelines are skipped: ask for as little of them as the homeserver allows.
FIRST_SYNC = json.dumps({"room": {"timeline": {"limit": 1}}})


class Listener:
    def __init__(self, account: MatrixAccount) -> None:
        self.account = account
        self.since: str | None = None  # in memory only: a restart starts with a fresh sync

    async def run(self) -> None:
        idle = self.account.settings.accounts_poll_seconds
        await reconnecting(self.account.token, self._session, idle=idle)

    async def _session(self, token: str) -> bool:
        """Whoami, then syncs until the token is taken away or something ends it; whether it
        got going."""
        account = self.account
        account.report(AccountPhase.CONNECTING)
        try:
            async with speaking_to_matrix(account.rate_limited):
                who = await account.client_with(token).whoami()
            if who.user_id != account.account_id:
                raise Unauthorized(f"the token is {who.user_id}'s, not {account.account_id}'s")
            account.report(AccountPhase.CONNECTED)
            await self._syncing()
        except Unauthorized as exc:
            log.warning("matrix account %r refused: %s", account.account_id, exc.message)
            account.report(AccountPhase.REFUSED, exc.message)
            return False
        except ParleyError as exc:
            log.warning("matrix account %r disconnected: %s", account.account_id, exc.message)
            account.report(AccountPhase.DISCONNECTED, f"disconnected: {exc.message}")
            return False
        except Exception as exc:  # whatever ended it, the account connects again
            log.exception("matrix account %r disconnected", account.account_id)
            account.report(AccountPhase.DISCONNECTED, f"disconnected: {type(exc).__name__}")
            return False
        return True

    async def _syncing(self) -> None:
        while (token := await self.account.token()) is not None:
            client = self.account.client_with(token)
            answer = await self._sync(client)
            if answer is None:
                continue
            next_batch = answer.get("next_batch")
            if not isinstance(next_batch, str) or not next_batch:
                raise Unavailable("the homeserver's sync answer has no next_batch")
            await self._take(client, answer, history=self.since is None)
            self.since = next_batch
        log.info("matrix account %r: its token was taken away", self.account.account_id)
        self.account.report(AccountPhase.NO_SECRET)

    async def _sync(self, client: ClientAPI) -> dict[str, Any] | None:
        """One long poll's answer; None after waiting out a rate limit."""
        timeout = int(self.account.settings.sync_timeout_seconds * 1000)
        try:
            async with speaking_to_matrix(self.account.rate_limited):
                answer = await client.sync(
                    since=SyncToken(self.since or ""),
                    timeout=timeout,
                    filter_id=FilterID(FIRST_SYNC if self.since is None else ""),
                )
        except Unavailable as exc:
            wait = exc.fields.get("retry_after_seconds")
            if not isinstance(wait, int | float):
                raise
            await asyncio.sleep(wait)
            return None
        return answer if isinstance(answer, dict) else {}

    async def _take(self, client: ClientAPI, answer: dict[str, Any], history: bool) -> None:
        for room_id, inviter in invites(answer, self.account.account_id):
            await self._invited(client, room_id, inviter)
        if history:
            return
        for room_id, event in joined_timelines(answer):
            try:
                await self._event(client, room_id, event)
            except Unavailable:
                raise  # the store is away: the whole batch is taken again
            except Exception:  # one event that breaks must not stop the rest, nor loop
                log.exception("matrix account %r: an event of %s not taken",
                              self.account.account_id, room_id)  # fmt: skip

    async def _event(self, client: ClientAPI, room_id: str, event: dict[str, Any]) -> None:
        heard = said(self.account.account_id, room_id, event)
        if heard is None:
            return
        if is_command(heard.text):
            await run_command(self.account, client, heard)
        else:
            await hearing.heard(self.account.store, self.account.clock, heard.ref, heard.sender,
                                heard.event_id, heard.text)  # fmt: skip

    async def _invited(self, client: ClientAPI, room_id: str, inviter: str) -> None:
        account = self.account
        if not await self._linked(inviter):
            log.info("matrix account %r: invite to %s by %s ignored (not linked here)",
                     account.account_id, room_id, inviter)  # fmt: skip
            return
        try:
            async with speaking_to_matrix(account.rate_limited):
                await client.join_room_by_id(RoomID(room_id))
            log.info("matrix account %r joined %s, invited by %s", account.account_id, room_id,
                     inviter)  # fmt: skip
        except ParleyError as exc:
            log.warning("matrix account %r: could not join %s: %s", account.account_id,
                        room_id, exc.message)  # fmt: skip

    async def _linked(self, user_id: str) -> bool:
        async with self.account.store.transaction() as tx:
            found = await tx.channels.account(MATRIX, self.account.account_id)
            return found is not None and await tx.channels.person_of(found.id, user_id) is not None
