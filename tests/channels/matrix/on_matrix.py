"""Parley (in process, its API and runtime) speaking to the fake homeserver through its real
Matrix channel (mautrix in between): a matrix account, the bot user ``@parley:fake.test`` with
the fake's access token, whose default agent is given, and the fake's ``ada`` linked to the
owner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from parley.channels.matrix.adapter import MatrixAdapter
from parley.channels.model import ConversationRef
from parley.settings import ChannelsSettings, MatrixSettings, Settings, ThreadBindingSettings
from tests.channels.matrix.fake_matrix import BOT, FakeMatrix
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, started

ACCOUNT = BOT
ACCOUNT_PATH = f"/channels/matrix/accounts/{quote(ACCOUNT)}"
ECHO = "otherwise: [{reply: 'echo: {text}'}]"


def on_matrix(
    settings: Settings, spawn_threads: bool, fake: FakeMatrix, idle_timeout: float | None = None
) -> Settings:
    """Parley's settings with its homeserver at ``fake``'s address."""
    bindings = ThreadBindingSettings(
        spawn_subagent_sessions=spawn_threads, idle_timeout_seconds=idle_timeout
    )
    matrix = MatrixSettings(
        thread_bindings=bindings,
        accounts_poll_seconds=0.05,
        homeserver_url=fake.url,
        sync_timeout_seconds=0.2,
    )
    return settings.model_copy(update={"channels": ChannelsSettings(matrix=matrix)})


async def link(parley: Harness, fake: FakeMatrix, name: str, person: str) -> None:
    await call(parley, "PUT", f"{ACCOUNT_PATH}/identities/{quote(fake.user(name))}",
               person=person)  # fmt: skip


async def set_up_account(parley: Harness, fake: FakeMatrix, default_agent: str) -> None:
    await call(parley, "PUT", ACCOUNT_PATH, default_agent=default_agent)
    await call(parley, "PUT", f"{ACCOUNT_PATH}/token", token=fake.token)
    await link(parley, fake, "ada", "owner")


@asynccontextmanager
async def parley_on(
    settings: Settings,
    clock: ManualClock,
    fake: FakeMatrix,
    setup: Callable[[Harness], Awaitable[None]] | None = None,
) -> AsyncIterator[Harness]:
    """Parley started (and ``setup`` done): yields once its listener is in a long poll after
    its first sync, so what a test says next is heard."""
    before = len(fake.calls)
    async with started(settings, clock) as parley:
        if setup is not None:
            await setup(parley)
        await fake.wait_until(lambda: _long_polling(fake, before))
        yield parley


def _long_polling(fake: FakeMatrix, before: int) -> bool:
    """A sync with ``since`` has been asked since ``before`` (the first one was answered)."""
    return any(c.route == "sync" and c.since is not None for c in fake.calls[before:])


@asynccontextmanager
async def scribe_on(
    settings: Settings, clock: ManualClock, fake: FakeMatrix, folder: Path
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


def place(room_id: str, root: str | None = None) -> ConversationRef:
    if root is None:
        return ConversationRef("matrix", ACCOUNT, room_id)
    return ConversationRef("matrix", ACCOUNT, root, room_id)


def adapter(parley: Harness) -> MatrixAdapter:
    found = parley.context.runtime.channels.registry.adapter_for(place("!x:fake.test"))
    assert isinstance(found, MatrixAdapter)
    return found


async def account_row(parley: Harness) -> dict[str, Any]:
    rows = await call(parley, "GET", "/channels/accounts")
    (row,) = [r for r in rows if r["channel"] == "matrix"]
    return dict(row)
