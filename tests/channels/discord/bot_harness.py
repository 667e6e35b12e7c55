"""A plain discord.py client for tests against the fake, and a way to run it until ready."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import discord
from discord import app_commands

from tests.channels.discord.fake_discord import HANG_GUARD, FakeDiscord


class Bot(discord.Client):
    """A real discord.py client that keeps every message it is shown."""

    def __init__(self, *, message_content: bool = True) -> None:
        intents = discord.Intents(guilds=True, guild_messages=True, message_content=message_content)
        # READY waits this long after the last GUILD_CREATE; the fake sends them all at once.
        super().__init__(intents=intents, guild_ready_timeout=0.05)
        self.tree = app_commands.CommandTree(self)
        self.seen: list[discord.Message] = []
        self._moved = asyncio.Event()

    def dispatch(self, event_name: str, /, *args: Any, **kwargs: Any) -> None:
        super().dispatch(event_name, *args, **kwargs)
        self._wake()

    async def on_message(self, message: discord.Message) -> None:
        self.seen.append(message)
        self._wake()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py waits 5 s before identifying again; the fake has no identify limit."""

    async def until(self, condition: Callable[[], bool]) -> None:
        """Wait until ``condition`` holds, checked after each event this bot handles."""
        async with asyncio.timeout(HANG_GUARD):
            while not condition():
                await self._moved.wait()

    async def message_where(self, matches: Callable[[discord.Message], bool]) -> discord.Message:
        await self.until(lambda: any(map(matches, self.seen)))
        return next(m for m in self.seen if matches(m))

    def _wake(self) -> None:
        # Everyone waiting on the old event wakes; later waits use a fresh one.
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()


@asynccontextmanager
async def running(bot: Bot, token: str, fake: FakeDiscord) -> AsyncIterator[asyncio.Task[None]]:
    """Log ``bot`` in, connect its gateway, and yield once it is ready with the fake's guilds."""
    connection: asyncio.Task[None] | None = None
    try:
        await bot.login(token)
        connection = asyncio.create_task(bot.connect())
        ready = asyncio.create_task(
            bot.until(lambda: bot.is_ready() and all(map(bot.get_guild, fake.state.guilds)))
        )
        await asyncio.wait({connection, ready}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            connection.result()
            raise RuntimeError("the bot's gateway connection ended before it was ready")
        ready.result()
        yield connection
    finally:
        await bot.close()
        if connection is not None:
            await asyncio.gather(connection, return_exceptions=True)
