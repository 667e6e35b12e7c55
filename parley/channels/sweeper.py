"""The bindings' sweep: an active binding idle past its idle timeout, or older than its max age,
ends (reason ``idle-timeout`` or ``max-age``) with a farewell posted to its conversation, so the
people there know why the session stopped answering. The farewell goes through the outbox."""

from __future__ import annotations

import logging

from parley.channels.outbound import ChannelPlace, ChannelPost
from parley.clock import Clock
from parley.store import Store
from parley.worker import Worker

log = logging.getLogger(__name__)


def farewell(reason: str, session: str) -> str:
    why = "no one wrote here for a while" if reason == "idle-timeout" else "it reached its age"
    return f"This conversation is no longer bound to {session}: {why} ({reason})."


async def sweep_bindings(store: Store, clock: Clock) -> list[int]:
    """End what is over now; the ids of the bindings ended."""
    ended: list[int] = []
    async with store.transaction() as tx:
        now = clock.now()
        for binding in await tx.bindings.active():
            reason = binding.why_over(now)
            if reason is None:
                continue
            await tx.bindings.end(now, reason, ids=[binding.binding_id])
            post = ChannelPost(
                **ChannelPlace.fields_of(binding.conversation),
                text=farewell(reason, binding.target_session_key),
            )
            if await tx.outbox.put(f"farewell:binding:{binding.binding_id}", post, now):
                tx.effects.outbox = True
            ended.append(binding.binding_id)
    return ended


class BindingSweeper(Worker):
    """Every ``interval`` seconds: the bindings whose time is up end."""

    def __init__(self, store: Store, clock: Clock, interval: float) -> None:
        super().__init__("the bindings' sweep", every=interval, logger=log)
        self._store, self._clock = store, clock

    async def one_pass(self) -> float | None:
        ended = await sweep_bindings(self._store, self._clock)
        if ended:
            log.info("bindings ended by the sweep: %s", ended)
        return None
