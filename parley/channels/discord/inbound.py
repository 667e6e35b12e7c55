"""What comes in over the gateway: a person's message goes to ``receive_from_user``; the bot's
own messages, its webhooks' (persona posts and command answers), system messages and other
bots' are never taken as text, so nothing Parley posts comes back to it as a turn. A thread
archived or deleted on Discord ends the binding it held."""

from __future__ import annotations

import discord

from parley.channels import hearing
from parley.channels.discord.refs import conversation
from parley.channels.model import ConversationRef
from parley.clock import Clock
from parley.store import Store


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
    if ref is not None:
        await hearing.heard(store, clock, ref, str(message.author.id), str(message.id),
                            message.content)  # fmt: skip


async def thread_gone(
    store: Store, clock: Clock, account_id: str, thread_id: int, parent_id: int, reason: str
) -> None:
    await hearing.thread_gone(store, clock, conversation(account_id, thread_id, parent_id), reason)
