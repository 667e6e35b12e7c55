"""Persona webhooks: a bound thread's replies are posted through a webhook of its parent
channel, under the agent's name (and avatar), so that each agent speaks as itself. One webhook
per parent channel, looked up among the channel's webhooks (one this bot made, named
``parley``) before one is made, and reused; its id is remembered so that its own messages,
echoed back over the gateway, are never taken as someone's text."""

from __future__ import annotations

import asyncio
from typing import Any

import discord

from parley.errors import Unavailable

WEBHOOK_NAME = "parley"
UNKNOWN_WEBHOOK = 10015  # Discord's code: the webhook was deleted (by a person, say)
MAX_USERNAME = 80


class PersonaWebhooks:
    def __init__(self) -> None:
        self._by_channel: dict[int, discord.Webhook] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self.ids: set[int] = set()  # every webhook of ours seen, for echo protection

    async def send(
        self,
        client: discord.Client,
        parent_id: int,
        thread_id: int,
        text: str,
        persona: str,
        avatar_url: str | None,
    ) -> int:
        """Post ``text`` in the thread as ``persona``; the message's id."""
        webhook = await self._for_channel(client, parent_id)
        try:
            sent = await webhook.send(
                text,
                username=persona[:MAX_USERNAME],
                avatar_url=avatar_url or discord.utils.MISSING,
                thread=discord.Object(thread_id),
                wait=True,
            )
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_WEBHOOK:
                raise
            self._by_channel.pop(parent_id, None)  # the next attempt looks for (or makes) another
            raise Unavailable(f"the webhook of channel {parent_id} is gone") from exc
        return sent.id

    async def _for_channel(self, client: discord.Client, channel_id: int) -> discord.Webhook:
        lock = self._locks.setdefault(channel_id, asyncio.Lock())
        async with lock:  # two first posts under one channel make one webhook
            found = self._by_channel.get(channel_id)
            if found is None:
                data = await _ours(client, channel_id) or await client.http.create_webhook(
                    channel_id, name=WEBHOOK_NAME
                )
                found = discord.Webhook.partial(int(data["id"]), str(data["token"]), client=client)
                self._by_channel[channel_id] = found
                self.ids.add(found.id)
            return found


async def _ours(client: discord.Client, channel_id: int) -> Any:
    me = client.user.id if client.user else None
    for data in await client.http.channel_webhooks(channel_id):
        creator: dict[str, Any] = dict(data.get("user") or {})
        made_by = creator.get("id")
        if data.get("name") == WEBHOOK_NAME and data.get("token") and str(made_by) == str(me):
            return data
    return None
