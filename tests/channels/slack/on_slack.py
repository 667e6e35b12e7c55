"""Parley (in process, its API and runtime) speaking to the fake Slack through its real Slack
adapter: a slack account ``app`` with the fake's two tokens, whose default agent is given, and
the fake's user ``ada`` linked to the owner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from parley.channels.model import ConversationRef
from parley.channels.slack.adapter import SlackAdapter
from parley.settings import ChannelsSettings, Settings, SlackSettings, ThreadBindingSettings
from tests.channels.slack.fake_slack import GENERAL, PEOPLE, FakeSlack
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, started

ACCOUNT = "app"
ECHO = "otherwise: [{reply: 'echo: {text}'}]"


def on_slack(
    settings: Settings, spawn_threads: bool, fake: FakeSlack, idle_timeout: float | None = None
) -> Settings:
    """Parley's settings with its Slack at ``fake``'s address, as an operator points it at
    another Web API."""
    bindings = ThreadBindingSettings(
        spawn_subagent_sessions=spawn_threads, idle_timeout_seconds=idle_timeout
    )
    slack = SlackSettings(thread_bindings=bindings, accounts_poll_seconds=0.05,
                          api_base_url=fake.api_url)  # fmt: skip
    return settings.model_copy(update={"channels": ChannelsSettings(slack=slack)})


async def set_up_account(parley: Harness, fake: FakeSlack, default_agent: str) -> None:
    account = f"/channels/slack/accounts/{ACCOUNT}"
    await call(parley, "PUT", account, default_agent=default_agent)
    await call(parley, "PUT", f"{account}/token", token=fake.secret)
    await call(parley, "PUT", f"{account}/identities/{PEOPLE['ada']}", person="owner")


@asynccontextmanager
async def parley_on(
    settings: Settings,
    clock: ManualClock,
    fake: FakeSlack,
    setup: Callable[[Harness], Awaitable[None]] | None = None,
) -> AsyncIterator[Harness]:
    """Parley started (and ``setup`` done): yields once its socket is open anew."""
    opened = fake.connections
    async with started(settings, clock) as parley:
        if setup is not None:
            await setup(parley)
        await fake.wait_until(lambda: fake.reopened(opened))
        yield parley


@asynccontextmanager
async def scribe_on(
    settings: Settings, clock: ManualClock, fake: FakeSlack, folder: Path
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


def place(channel: str = GENERAL, thread_ts: str | None = None) -> ConversationRef:
    if thread_ts is None:
        return ConversationRef("slack", ACCOUNT, channel)
    return ConversationRef("slack", ACCOUNT, f"{channel}/{thread_ts}", channel)


def adapter(parley: Harness) -> SlackAdapter:
    found = parley.context.runtime.channels.registry.adapter_for(place())
    assert isinstance(found, SlackAdapter)
    return found


async def account_row(parley: Harness) -> dict[str, Any]:
    rows = await call(parley, "GET", "/channels/accounts")
    (row,) = [r for r in rows if r["channel"] == "slack"]
    return dict(row)
