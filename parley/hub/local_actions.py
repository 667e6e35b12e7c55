"""The Actions port for brains that run in the hub's process: the same checks as the HTTP
endpoints (the table's arguments, a running run behind the token, the node session's narrower
list), without HTTP."""

from __future__ import annotations

from collections.abc import Mapping

from parley.actions.arguments import bind
from parley.clock import Clock
from parley.conversations.hops import HopBudgetSpent
from parley.conversations.model import HopBudget
from parley.conversations.refusals import SendRefused, tell_refusal
from parley.hub.actions import Acted, RunActing
from parley.store import Store


class LocalActions:
    def __init__(self, store: Store, clock: Clock, token: str, budget: HopBudget) -> None:
        self._store, self._clock, self._token = store, clock, token
        self._budget = budget

    async def act(self, name: str, arguments: Mapping[str, object]) -> str:
        return (await self.acted(name, arguments)).result

    async def acted(self, name: str, arguments: Mapping[str, object]) -> Acted:
        """As ``act``, with the ids of what the action made or reached."""
        checked = bind(name, arguments)  # before a transaction: a malformed call costs none
        try:
            async with self._store.transaction() as tx:
                acting = await RunActing.for_token(tx, self._clock, self._budget, self._token)
                return await acting.act(name, checked)
        except (HopBudgetSpent, SendRefused) as refusal:  # rolled back; the root still hears
            async with self._store.transaction() as tx:
                await tell_refusal(tx, self._clock.now(), refusal)
            raise
