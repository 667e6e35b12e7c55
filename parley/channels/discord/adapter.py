"""The Discord adapter of one account, as the outbox uses it (``ChannelAdapter``): a post goes
as the bot, plain, with the outbox key as its nonce (Discord posts a nonce it has seen once
only), or, in a bound thread and for an agent, through the parent channel's persona webhook.
A thread is started from a message in its parent (the intro, posted with the key as nonce), so
that a repeated attempt finds the thread the first one made. Every send records the account's
activity and touches the binding it went through; a bound thread Discord no longer knows ends
its binding."""

from __future__ import annotations

import discord

from parley.channels.discord.failures import speaking_to_discord
from parley.channels.discord.manager import DiscordAccountManager
from parley.channels.discord.refs import conversation, nonce, snowflake
from parley.channels.hearing import posting, record_outbound
from parley.channels.model import ConversationRef, SessionBindingRecord
from parley.clock import Clock
from parley.errors import Invalid

MAX_MESSAGE = 2000  # characters of one Discord message
MAX_THREAD_NAME = 100
THREAD_ALREADY_MADE = 160004  # Discord's code: this message has a thread already


class DiscordAdapter:
    def __init__(self, manager: DiscordAccountManager, clock: Clock) -> None:
        self._manager, self._clock = manager, clock

    async def post(
        self, ref: ConversationRef, text: str, persona: str | None, idempotency_key: str
    ) -> str:
        async def send(binding: SessionBindingRecord | None) -> int:
            async with speaking_to_discord():
                client = await self._manager.connected()
                if persona is not None and binding is not None and ref.parent_conversation_id:
                    return await self._as_persona(client, ref, text, persona)
                return await _plain(client, snowflake(ref.conversation_id), text, idempotency_key)

        return str(await posting(self._manager.store, self._clock, ref, send))

    async def create_thread(
        self, parent: ConversationRef, name: str, idempotency_key: str
    ) -> ConversationRef:
        if parent.parent_conversation_id is not None:
            raise Invalid(f"{parent} is a thread: Discord threads have no threads")
        channel_id = snowflake(parent.conversation_id)
        intro = f"{name}: its answers come in the thread under this message."
        async with speaking_to_discord():
            client = await self._manager.connected()
            starter = await _plain(client, channel_id, intro, idempotency_key)
            try:
                await client.http.start_thread_with_message(
                    channel_id, starter, name=name[:MAX_THREAD_NAME], auto_archive_duration=1440
                )
            except discord.HTTPException as exc:
                if exc.code != THREAD_ALREADY_MADE:  # made by an attempt whose answer was lost
                    raise
        await record_outbound(self._manager.store, self._clock, parent, None)
        # Discord gives a thread started from a message the message's own id.
        return conversation(parent.account_id, starter, channel_id)

    async def _as_persona(
        self, client: discord.Client, ref: ConversationRef, text: str, persona: str
    ) -> int:
        assert ref.parent_conversation_id is not None
        parent, thread = snowflake(ref.parent_conversation_id), snowflake(ref.conversation_id)
        template = self._manager.settings.avatar_url
        avatar = None if template is None else template.replace("{agent}", persona)
        sent = 0
        for part in _parts(text):
            sent = await self._manager.webhooks.send(client, parent, thread, part, persona, avatar)
        return sent


async def _plain(client: discord.Client, channel_id: int, text: str, key: str) -> int:
    """Post as the bot; each part with its own nonce, so a repeated attempt posts none twice."""
    channel = client.get_partial_messageable(channel_id)
    sent = 0
    for number, part in enumerate(_parts(text)):
        part_key = key if number == 0 else f"{key}:{number}"
        sent = (await channel.send(part, nonce=nonce(part_key))).id
    return sent


def _parts(text: str) -> list[str]:
    """Discord takes 2000 characters a message: longer text goes in several, in order."""
    return [text[i : i + MAX_MESSAGE] for i in range(0, len(text), MAX_MESSAGE)] or [text]
