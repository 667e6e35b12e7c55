"""The bot's discord.py client for one account: the gateway events it acts on (messages, threads
archived or deleted) and its application commands (/focus, /unfocus), synced once it is ready."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord
from discord import app_commands

from parley.channels import focus as focusing
from parley.channels.connected import AccountPhase
from parley.channels.discord.failures import speaking_to_discord
from parley.channels.discord.inbound import heard, is_echo, place_of, thread_gone
from parley.channels.discord.manager import DiscordAccountManager
from parley.channels.model import ConversationRef
from parley.clock import Clock
from parley.errors import Forbidden, ParleyError
from parley.store import Store, Tx

log = logging.getLogger(__name__)

INTENTS = discord.Intents(guilds=True, guild_messages=True, message_content=True)


class ParleyBot(discord.Client):
    def __init__(
        self,
        manager: DiscordAccountManager,
        clock: Clock,
        guild_ready_timeout: float,
    ) -> None:
        super().__init__(intents=INTENTS, guild_ready_timeout=guild_ready_timeout)
        self.manager, self.clock = manager, clock
        self.tree = app_commands.CommandTree(self)
        self._add_commands()

    @property
    def store(self) -> Store:
        return self.manager.store

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        # Once closed, discord.py's loop is a sentinel that raises when used: an event parsed
        # from the gateway's last frames made its handler's coroutine, left it unawaited and
        # raised out of the session (reported as "disconnected: AttributeError").
        if isinstance(self.loop, asyncio.AbstractEventLoop):
            super().dispatch(event, *args, **kwargs)

    async def on_connect(self) -> None:
        self.manager.report(AccountPhase.CONNECTED)

    async def on_resumed(self) -> None:
        self.manager.report(AccountPhase.CONNECTED)

    async def on_ready(self) -> None:
        if not self.manager.commands_synced:
            try:
                await self.tree.sync()
                self.manager.commands_synced = True
            except discord.HTTPException as exc:
                log.warning("discord account %r: commands not synced: %s",
                            self.manager.account_id, exc.status)  # fmt: skip

    async def on_message(self, message: discord.Message) -> None:
        bot_id = self.user.id if self.user else None
        if not is_echo(message, bot_id, self.manager.webhooks.ids):
            await heard(self.store, self.clock, self.manager.account_id, message)

    async def on_raw_thread_update(self, payload: discord.RawThreadUpdateEvent) -> None:
        if payload.data.get("thread_metadata", {}).get("archived"):
            await self._thread_gone(payload.thread_id, payload.parent_id, "thread-archived")

    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        await self._thread_gone(payload.thread_id, payload.parent_id, "thread-deleted")

    async def _thread_gone(self, thread_id: int, parent_id: int, reason: str) -> None:
        await thread_gone(self.store, self.clock, self.manager.account_id, thread_id, parent_id,
                          reason)  # fmt: skip

    def _add_commands(self) -> None:
        @self.tree.command(name="focus", description="Bind this channel or thread to a session")
        @app_commands.describe(target="an agent's name (your conversation) or topic:ID")
        async def focus(interaction: discord.Interaction, target: str) -> None:
            lifetimes = self.manager.settings.thread_bindings
            await self._answer(
                interaction,
                lambda tx, ref, user: focusing.focus(tx, self.clock, ref, user, target, lifetimes),
            )

        @self.tree.command(name="unfocus", description="Unbind this channel or thread")
        async def unfocus(interaction: discord.Interaction) -> None:
            await self._answer(
                interaction, lambda tx, ref, user: focusing.unfocus(tx, self.clock, ref, user)
            )

    async def _answer(
        self,
        interaction: discord.Interaction,
        act: Callable[[Tx, ConversationRef, str], Awaitable[str]],
    ) -> None:
        """Run the command in one transaction; answer its outcome (a refusal too) to the
        person who asked, only them."""
        ref = place_of(self.manager.account_id, interaction.channel)
        try:
            if ref is None:
                raise Forbidden("only a server's text channels and threads are bound")
            async with self.store.transaction() as tx:
                words = await act(tx, ref, str(interaction.user.id))
        except ParleyError as exc:
            words = exc.message
        async with speaking_to_discord():
            await interaction.response.send_message(words, ephemeral=True)
