"""What every chat service's adapter does around its own calls, written once: a person's message
heard in a conversation (its activity recorded, the text given to ``receive_from_user``, and a
refusal posted back when Parley cannot take it), a bound thread the service no longer has (its
binding ends), and a post's activity (the account's last outbound time, and the binding the post
went through touched, which is what its idle timeout counts from)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from parley.channels.bindings import SessionBindingService
from parley.channels.inbound import receive_from_user, refusal_key
from parley.channels.model import ConversationRef, SessionBindingRecord
from parley.channels.outbound import ChannelPlace, ChannelPost
from parley.clock import Clock
from parley.errors import NotFound, ParleyError
from parley.store import Store

log = logging.getLogger(__name__)
T = TypeVar("T")

THREAD_DELETED = "thread-deleted"  # why a binding ended when its thread was found gone


async def heard(
    store: Store, clock: Clock, ref: ConversationRef, user_id: str, message_id: str, text: str
) -> None:
    """A person (as the service knows them) said ``text`` in ``ref``, in its message
    ``message_id``; what Parley cannot take (no default agent, a closed session, text too long)
    is said back there, once per message."""
    try:
        async with store.transaction() as tx:
            await tx.channels.record_activity(ref.channel, ref.account_id, clock.now(),
                                              outbound=False)  # fmt: skip
            await receive_from_user(tx, clock, ref, user_id, message_id, text)
    except ParleyError as exc:
        await tell(store, clock, ref, message_id, exc.message)


async def tell(
    store: Store, clock: Clock, ref: ConversationRef, message_id: str, text: str
) -> None:
    post = ChannelPost(**ChannelPlace.fields_of(ref), text=f"Parley could not take that: {text}")
    async with store.transaction() as tx:
        if await tx.outbox.put(refusal_key(ref, message_id), post, clock.now()):
            tx.effects.outbox = True


async def thread_gone(store: Store, clock: Clock, ref: ConversationRef, reason: str) -> None:
    """The service ended the thread ``ref`` (archived, deleted): its binding ends, if any."""
    async with store.transaction() as tx:
        bindings = SessionBindingService(tx, clock)
        held = await bindings.resolve_by_conversation(ref)
        if held is not None:
            await bindings.unbind(reason, binding_id=held.binding_id)
            log.info("binding %s ended: %s", held.binding_id, reason)


async def posting(
    store: Store,
    clock: Clock,
    ref: ConversationRef,
    send: Callable[[SessionBindingRecord | None], Awaitable[T]],
    gone: tuple[type[ParleyError], ...] = (NotFound,),
) -> T:
    """One post of an adapter, around the service's own call: ``send`` is given the active
    binding that holds ``ref`` (None: none); a place the service says is ``gone`` ends that
    binding (and the failure stands); a post made is the account's activity and the binding's."""
    binding = await live_binding_at(store, ref)
    try:
        sent = await send(binding)
    except gone:
        if binding is not None:
            await unbind_gone(store, clock, binding)
        raise
    await record_outbound(store, clock, ref, None if binding is None else binding.binding_id)
    return sent


async def live_binding_at(store: Store, ref: ConversationRef) -> SessionBindingRecord | None:
    """The active binding that holds ``ref``, if one does (a post there goes through it)."""
    async with store.transaction() as tx:
        held = await tx.bindings.live_by_conversation(ref)
    return held if held is not None and held.is_active else None


async def unbind_gone(
    store: Store, clock: Clock, binding: SessionBindingRecord, reason: str = THREAD_DELETED
) -> None:
    async with store.transaction() as tx:
        await SessionBindingService(tx, clock).unbind(reason, binding_id=binding.binding_id)


async def record_outbound(
    store: Store, clock: Clock, ref: ConversationRef, binding_id: int | None
) -> None:
    async with store.transaction() as tx:
        now = clock.now()
        await tx.channels.record_activity(ref.channel, ref.account_id, now, outbound=True)
        if binding_id is not None:
            await tx.bindings.touch(binding_id, now)
