"""Parley (in process, its API and runtime) speaking to the fake Telegram through its real
Telegram adapter: a telegram account ``bot`` with the fake's token, whose default agent is
``scribe`` or ``manager``, and the fake's user ``ada`` linked to the owner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from parley.channels.model import ConversationRef
from parley.channels.telegram.adapter import TelegramAdapter
from parley.settings import ChannelsSettings, Settings, TelegramSettings, ThreadBindingSettings
from tests.channels.telegram.fake_telegram import FakeTelegram
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, started

ACCOUNT = "bot"
ECHO = "otherwise: [{reply: 'echo: {text}'}]"


def on_telegram(
    settings: Settings, spawn_threads: bool, fake: FakeTelegram, idle_timeout: float | None = None
) -> Settings:
    """Parley's settings with its Telegram at ``fake``'s address, as an operator points it at a
    local Bot API server; long polls kept short, so that a stop is quick."""
    bindings = ThreadBindingSettings(
        spawn_subagent_sessions=spawn_threads, idle_timeout_seconds=idle_timeout
    )
    telegram = TelegramSettings(
        thread_bindings=bindings,
        accounts_poll_seconds=0.05,
        api_base_url=fake.url,
        poll_timeout_seconds=1,
    )
    return settings.model_copy(update={"channels": ChannelsSettings(telegram=telegram)})


async def link(parley: Harness, fake: FakeTelegram, name: str, person: str) -> None:
    user = fake.state.user(name)
    await call(
        parley, "PUT", f"/channels/telegram/accounts/{ACCOUNT}/identities/{user.id}", person=person
    )


async def set_up_account(parley: Harness, fake: FakeTelegram, default_agent: str) -> None:
    account = f"/channels/telegram/accounts/{ACCOUNT}"
    await call(parley, "PUT", account, default_agent=default_agent)
    await call(parley, "PUT", f"{account}/token", token=fake.token)
    await link(parley, fake, "ada", "owner")


@asynccontextmanager
async def parley_on(
    settings: Settings,
    clock: ManualClock,
    fake: FakeTelegram,
    setup: Callable[[Harness], Awaitable[None]] | None = None,
) -> AsyncIterator[Harness]:
    """Parley started (and ``setup`` done): yields once the bot polls the fake anew."""
    polls = len(fake.state.calls_to("getUpdates"))
    async with started(settings, clock) as parley:
        if setup is not None:
            await setup(parley)
        await fake.wait_until(lambda: len(fake.state.calls_to("getUpdates")) > polls)
        yield parley


@asynccontextmanager
async def scribe_on(
    settings: Settings, clock: ManualClock, fake: FakeTelegram, folder: Path
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


def place(conversation_id: object, parent: object = None) -> ConversationRef:
    return ConversationRef(
        "telegram", ACCOUNT, str(conversation_id), None if parent is None else str(parent)
    )


def adapter(parley: Harness) -> TelegramAdapter:
    found = parley.context.runtime.channels.registry.adapter_for(place(1))
    assert isinstance(found, TelegramAdapter)
    return found


async def account_row(parley: Harness) -> dict[str, Any]:
    rows = await call(parley, "GET", "/channels/accounts")
    (row,) = [r for r in rows if r["channel"] == "telegram"]
    return dict(row)


async def texts_of(parley: Harness, agent: str) -> list[str]:
    """What the person's conversation with ``agent`` holds, as text."""
    response = await parley.owner.get(f"/api/v1/conversations/{agent}")
    if response.status_code == 404:  # none yet
        return []
    assert response.status_code == 200, response.text
    conversation = response.json()
    return [m["body"] for m in conversation["messages"]["items"] if m["kind"] == "text"]
