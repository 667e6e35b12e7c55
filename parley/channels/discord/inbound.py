"""What comes in over the gateway: a person's message goes to ``receive_from_user``; the bot's
own messages, its webhooks' (persona posts and command answers), system messages and other
bots' are never taken as text, so nothing Parley posts comes back to it as a turn. A thread
archived or deleted on Discord ends the binding it held."""

from __future__ import annotations

import logging

import discord

from parley.channels.bindings import SessionBindingService
from parley.channels.discord.refs import conversation
from parley.channels.inbound import receive_from_user, refusal_key
from parley.channels.model import ConversationRef
from parley.channels.outbound import ChannelPlace, ChannelPost
from parley.clock import Clock
from parley.errors import ParleyError
from parley.store import Store

log = logging.getLogger(__name__)


def is_echo(message: discord.Message, bot_id: int | None, own_webhooks: set[int]) -> bool:
    """Not a person's text: ours, our webhooks', a system message, another bot's."""
    if bot_id is not None and message.author.id == bot_id:
        return True
    if message.webhook_id is not None and message.webhook_id in own_webhooks:
        return True
    return message.is_system() or message.author.bot or message.webhook_id is not None


def place_of(account_id: str, channel: object) -> ConversationRef | None:
    """Where a message was said: a guild text channel, or a thread under one (else None)."""
    if isinstance(channel, discord.Thread):
        return conversation(account_id, channel.id, channel.parent_id)
    if isinstance(channel, discord.TextChannel):
        return conversation(account_id, channel.id, None)
    return None


async def heard(store: Store, clock: Clock, account_id: str, message: discord.Message) -> None:
    ref = place_of(account_id, message.channel)
    if ref is None:
        return
    try:
        async with store.transaction() as tx:
            await tx.channels.record_activity(ref.channel, ref.account_id, clock.now(),
                                              outbound=False)  # fmt: skip
            await receive_from_user(
                tx, clock, ref, str(message.author.id), str(message.id), message.content
            )
    except ParleyError as exc:  # no default agent, a closed session, text too long: say so
        await _tell(store, clock, ref, str(message.id), exc.message)


async def _tell(
    store: Store, clock: Clock, ref: ConversationRef, message_id: str, text: str
) -> None:
    post = ChannelPost(**ChannelPlace.fields_of(ref), text=f"Parley could not take that: {text}")
    async with store.transaction() as tx:
        if await tx.outbox.put(refusal_key(ref, message_id), post, clock.now()):
            tx.effects.outbox = True


async def thread_gone(
    store: Store, clock: Clock, account_id: str, thread_id: int, parent_id: int, reason: str
) -> None:
    ref = conversation(account_id, thread_id, parent_id)
    async with store.transaction() as tx:
        bindings = SessionBindingService(tx, clock)
        held = await bindings.resolve_by_conversation(ref)
        if held is not None:
            await bindings.unbind(reason, binding_id=held.binding_id)
            log.info("binding %s ended: %s", held.binding_id, reason)
