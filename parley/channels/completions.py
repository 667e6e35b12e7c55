"""A subtask's completion, routed: it reaches the run that spawned it as before (new text in its
session), and, when the subtask's session is bound to a channel conversation, it is posted
there — there and only there. The destination is chosen first, by the router, from the bindings
and the requester (the channel conversation the spawning run's text came from); the post is
written next, in the same transaction, as an outbox item keyed by the completion's (task, run)
key. The choice (mode, reason, destination) is recorded on the completion's own item either
way, so that a fallback is visible in ``parley delivery list``."""

from __future__ import annotations

from parley.channels.model import ref_from_json, session_key
from parley.channels.outbound import ChannelPlace, ChannelPost
from parley.channels.router import TASK_COMPLETION, resolve_destination
from parley.clock import Clock
from parley.deliveries.deliverers import LocalDeliverer
from parley.deliveries.model import RouteNote, TaskCompletion
from parley.store import Tx


class RoutedCompletionDeliverer:
    def __init__(self, inner: LocalDeliverer[TaskCompletion]) -> None:
        self._inner = inner

    async def deliver(self, tx: Tx, clock: Clock, payload: TaskCompletion) -> None:
        await self._inner.deliver(tx, clock, payload)
        await route_completion(tx, clock, payload)

    async def undeliverable(
        self, tx: Tx, clock: Clock, payload: TaskCompletion, reason: str
    ) -> None:
        await self._inner.undeliverable(tx, clock, payload, reason)


async def route_completion(tx: Tx, clock: Clock, payload: TaskCompletion) -> None:
    key = session_key(payload.task_id)
    bindings = await tx.bindings.live_by_session(key)
    requester = ref_from_json(payload.requester)
    chosen = resolve_destination(TASK_COMPLETION, key, requester, False, bindings)
    binding = chosen.binding
    where = str(binding.conversation) if binding else f"topic:{payload.topic_id}"
    note = RouteNote(chosen.mode.value, chosen.reason, where)
    if payload.key is not None:
        await tx.outbox.note_route(payload.key, note)
    if binding is None or payload.key is None:
        return
    worker = await tx.agents.by_id(payload.author_agent_id) if payload.author_agent_id else None
    post = ChannelPost(
        **ChannelPlace.fields_of(binding.conversation),
        text=payload.text,
        persona=worker.name if worker else None,
        binding_id=binding.binding_id,
        topic_id=payload.task_id,
    )
    if await tx.outbox.put(f"{payload.key}:post", post, clock.now(), route=note):
        tx.effects.outbox = True
