"""The Actions port for brains that run in the hub's process: the same checks as the HTTP
endpoints (a running run behind the token, the node session's narrower list), without HTTP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from parley.clock import Clock
from parley.hub.actions import RunActing
from parley.store import Store


class LocalActions:
    def __init__(self, store: Store, clock: Clock, token: str) -> None:
        self._store, self._clock, self._token = store, clock, token

    async def _act(self, action: str, do: Callable[[RunActing], Awaitable[str]]) -> str:
        async with self._store.transaction() as tx:
            acting = await RunActing.for_token(tx, self._clock, self._token, action)
            return await do(acting)

    async def send(self, to: str, text: str) -> str:
        return await self._act("send", lambda acting: acting.send(to, text))

    async def report(self, text: str) -> str:
        return await self._act("report", lambda acting: acting.report(text))

    async def spawn(self, agent: str, text: str, thread: bool = False) -> str:
        return await self._act("spawn", lambda acting: acting.spawn(agent, text, thread))

    async def complete(self, result: str, failed: bool = False) -> str:
        return await self._act("complete", lambda acting: acting.complete(result, failed))

    async def remember(self, note: str) -> str:
        return await self._act("remember", lambda acting: acting.remember(note))

    async def ask_node(self, node: str, text: str) -> str:
        return await self._act("ask_node", lambda acting: acting.ask_node(node, text))
