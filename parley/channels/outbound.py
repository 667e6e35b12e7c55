"""Posts to channel conversations, through the outbox: a ``channel_post`` is a remote kind, sent
by the adapter of its conversation's account as found at send time (never one captured when
the item was written), with the item's key. Every post records activity on the binding it went
through. A ``channel_thread`` makes the thread a subtask spawned with ``thread`` is bound to."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import ClassVar

from parley.channels.bindings import SessionBindingService
from parley.channels.model import (
    BindingTargetKind,
    BindRequest,
    ConversationRef,
    ref_from_json,
    session_key,
)
from parley.channels.registry import AdapterRegistry
from parley.channels.router import as_ref
from parley.clock import Clock
from parley.conversations.model import Topic, TopicKind
from parley.deliveries.model import Payload, RouteNote
from parley.runs.model import Run
from parley.store import Store, Tx

POST_TIMEOUT = 30.0


class ChannelPlace(Payload):
    """A conversation, as an outbox item carries it."""

    channel: str
    account_id: str
    conversation_id: str
    parent_conversation_id: str | None = None

    @property
    def ref(self) -> ConversationRef:
        return ConversationRef(
            self.channel, self.account_id, self.conversation_id, self.parent_conversation_id
        )

    @staticmethod
    def fields_of(ref: ConversationRef) -> dict[str, str | None]:
        return {
            "channel": ref.channel,
            "account_id": ref.account_id,
            "conversation_id": ref.conversation_id,
            "parent_conversation_id": ref.parent_conversation_id,
        }


class ChannelPost(ChannelPlace):
    kind: ClassVar[str] = "channel_post"
    text: str
    persona: str | None = None  # the agent it speaks for; None: Parley itself
    binding_id: int | None = None  # the binding it goes through, touched when sent
    topic_id: int | None = None  # where a post that never will be is noted


class ChannelThread(ChannelPlace):
    """A thread to make under the requester's conversation and bind to a subtask's session."""

    kind: ClassVar[str] = "channel_thread"
    task_id: int
    name: str
    bound_by: str
    idle_timeout_seconds: float | None = None
    max_age_seconds: float | None = None


class ChannelPostDeliverer:
    timeout = POST_TIMEOUT

    def __init__(self, store: Store, clock: Clock, registry: AdapterRegistry) -> None:
        self._store, self._clock, self._registry = store, clock, registry

    async def send(self, payload: ChannelPost, idempotency_key: str) -> None:
        adapter = self._registry.adapter_for(payload.ref)
        await adapter.post(payload.ref, payload.text, payload.persona, idempotency_key)
        if payload.binding_id is not None:
            async with self._store.transaction() as tx:
                await tx.bindings.touch(payload.binding_id, self._clock.now())

    async def undeliverable(self, tx: Tx, clock: Clock, payload: ChannelPost, reason: str) -> None:
        if payload.topic_id is not None:
            note = f"A post to {payload.ref} was not delivered: {reason}"
            await tx.messages.add(payload.topic_id, "notice", note, clock.now())


class ChannelThreadDeliverer:
    timeout = POST_TIMEOUT

    def __init__(self, store: Store, clock: Clock, registry: AdapterRegistry) -> None:
        self._store, self._clock, self._registry = store, clock, registry

    async def send(self, payload: ChannelThread, idempotency_key: str) -> None:
        adapter = self._registry.adapter_for(payload.ref)
        thread = await adapter.create_thread(payload.ref, payload.name, idempotency_key)
        key = session_key(payload.task_id)
        async with self._store.transaction() as tx:
            bindings = SessionBindingService(tx, self._clock)
            held = await bindings.resolve_by_conversation(thread)
            if held is not None and held.target_session_key == key:
                return  # bound by an attempt whose settling was lost
            await bindings.bind(
                BindRequest(
                    target_session_key=key,
                    target_kind=BindingTargetKind.SUBAGENT,
                    conversation=thread,
                    bound_by=payload.bound_by,
                    idle_timeout=_seconds(payload.idle_timeout_seconds),
                    max_age=_seconds(payload.max_age_seconds),
                ),
                creator=None,  # a run, for its subtask, which every person reads
            )

    async def undeliverable(
        self, tx: Tx, clock: Clock, payload: ChannelThread, reason: str
    ) -> None:
        note = f"No thread was made for this subtask under {payload.ref}: {reason}"
        await tx.messages.add(payload.task_id, "notice", note, clock.now())


def _seconds(value: float | None) -> timedelta | None:
    return None if value is None else timedelta(seconds=value)


async def post_reply(tx: Tx, clock: Clock, run: Run, topic: Topic, text: str) -> None:
    """A reply goes back to the channel conversation its turn's text came from, if it came from
    one (besides the topic's history, where every reply is)."""
    if topic.kind not in (TopicKind.CONVERSATION, TopicKind.TASK):
        return
    await post_where_run_is(tx, clock, run, topic, f"reply:{run.id}", text, run.agent_name, "reply")


async def post_where_run_is(
    tx: Tx,
    clock: Clock,
    run: Run,
    topic: Topic,
    key: str,
    text: str | Callable[[ConversationRef], str],
    persona: str | None,
    why: str,
    *,
    or_bound: bool = False,
) -> bool:
    """Post ``text`` (once, by ``key``; worded for the place, if it is a function of it) where
    ``run``'s text came from in a channel, if it came from one; with ``or_bound``, else in a
    conversation its session is bound to. False: no such place."""
    place = await _place_of_run(tx, run, topic, or_bound)
    if place is None:
        return False
    ref, through = place
    words = text if isinstance(text, str) else text(ref)
    post = ChannelPost(
        **ChannelPlace.fields_of(ref), text=words, persona=persona, binding_id=through,
        topic_id=topic.id,
    )  # fmt: skip
    if await tx.outbox.put(key, post, clock.now(), route=RouteNote(None, why, str(ref))):
        tx.effects.outbox = True
    return True


async def _place_of_run(
    tx: Tx, run: Run, topic: Topic, or_bound: bool
) -> tuple[ConversationRef, int | None] | None:
    """Where to post for ``run``, and the binding the post goes through (touched when sent)."""
    key = session_key(topic.id)
    recorded = ref_from_json(await tx.messages.channel_ref_of_run(run.id))
    ref = None if recorded is None else as_ref(recorded)
    if ref is not None:
        held = await tx.bindings.live_by_conversation(ref)
        return ref, held.binding_id if held and held.target_session_key == key else None
    if not or_bound:
        return None
    bound = await tx.bindings.live_by_session(key)
    return (bound[0].conversation, bound[0].binding_id) if bound else None
