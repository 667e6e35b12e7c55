"""Parley (in process, its API and runtime) speaking to the fake Discord through its real
Discord adapter: a discord account ``bot`` with the fake's token, whose default agent is
``manager``, and the fake's user ``ada`` linked to the owner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

from parley.channels.discord.adapter import DiscordAdapter
from parley.channels.model import ConversationRef
from parley.settings import (
    ChannelsSettings,
    DiscordSettings,
    DiscordThreadBindingSettings,
    Settings,
)
from tests.channels.discord.fake_discord import FakeDiscord
from tests.channels.discord.fake_http import API
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, started

ACCOUNT = "bot"
AVATAR = "https://example.invalid/avatars/{agent}.png"
COMMANDS = 2  # /focus and /unfocus, synced once the bot is ready
ECHO = "otherwise: [{reply: 'echo: {text}'}]"
MESSAGES = "/channels/{channel_id}/messages"


def on_discord(settings: Settings, spawn_threads: bool, fake: FakeDiscord) -> Settings:
    """Parley's settings with its Discord at ``fake``'s addresses, as an operator points it at a
    compatible server."""
    bindings = DiscordThreadBindingSettings(spawn_subagent_sessions=spawn_threads)
    discord = DiscordSettings(
        thread_bindings=bindings,
        accounts_poll_seconds=0.05,
        avatar_url=AVATAR,
        api_base_url=fake.url + API,
        gateway_url=fake.gateway.url,
        guild_ready_seconds=0.05,  # the fake sends all its servers at once
    )
    return settings.model_copy(update={"channels": ChannelsSettings(discord=discord)})


async def set_up_account(parley: Harness, fake: FakeDiscord, default_agent: str) -> None:
    account = f"/channels/discord/accounts/{ACCOUNT}"
    await call(parley, "PUT", account, default_agent=default_agent)
    await call(parley, "PUT", f"{account}/token", token=fake.token)
    ada = fake.state.user("ada")
    await call(parley, "PUT", f"{account}/identities/{ada.id}", person="owner")


@asynccontextmanager
async def parley_on(
    settings: Settings,
    clock: ManualClock,
    fake: FakeDiscord,
    setup: Callable[[Harness], Awaitable[None]] | None = None,
) -> AsyncIterator[Harness]:
    """Parley started (and ``setup`` done): yields once the bot has connected anew and its
    commands are synced."""
    identified = fake.gateway.identifies
    async with started(settings, clock) as parley:
        if setup is not None:
            await setup(parley)
        await fake.wait_until(lambda: fake.gateway.identifies > identified)
        await fake.wait_until(lambda: len(fake.state.commands) == COMMANDS)
        yield parley


@asynccontextmanager
async def scribe_on(
    settings: Settings, clock: ManualClock, fake: FakeDiscord, folder: Path
) -> AsyncIterator[Harness]:
    """Parley whose account's default agent is ``scribe``, echoing every text it is given."""

    async def setup(harness: Harness) -> None:
        await harness.hire("scribe", brain=script(folder, "scribe", ECHO))
        await set_up_account(harness, fake, "scribe")

    async with parley_on(settings, clock, fake, setup) as harness:
        yield harness


def moment(value: object) -> datetime:
    assert isinstance(value, str), value
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def place(channel_id: int, parent_id: int | None = None) -> ConversationRef:
    parent = None if parent_id is None else str(parent_id)
    return ConversationRef("discord", ACCOUNT, str(channel_id), parent)


def adapter(parley: Harness) -> DiscordAdapter:
    found = parley.context.runtime.channels.registry.adapter_for(place(1))
    assert isinstance(found, DiscordAdapter)
    return found
