"""Every post of the account, a webhook's included, is activity: the account's last outbound
time, and the binding it went through touched (what its idle timeout counts from)."""

from __future__ import annotations

from parley.channels.model import ConversationRef
from parley.clock import Clock
from parley.store import Store


async def record_outbound(
    store: Store, clock: Clock, ref: ConversationRef, binding_id: int | None
) -> None:
    async with store.transaction() as tx:
        now = clock.now()
        await tx.channels.record_activity(ref.channel, ref.account_id, now, outbound=True)
        if binding_id is not None:
            await tx.bindings.touch(binding_id, now)
