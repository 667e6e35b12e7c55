"""Hostile and odd input through the long poll, against the fake (SQLite and PostgreSQL): text
Telegram could not have sent (100 KB, NUL), updates the library cannot read, updates of kinds
never asked for, replies to messages of no chain. Each is ignored with a log line (the poll goes
on, the update confirmed) or said where it belongs; nothing of the ignored ones is stored.
(Parley polls: there is no webhook to forge; an update comes from the Bot API server the
settings name, over its own connection.)"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.telegram.fake_telegram import FakeTelegram
from tests.channels.telegram.on_telegram import account_row, on_telegram, scribe_on, texts_of
from tests.support import Harness, ManualClock, call


@pytest.fixture
def settings(settings: Settings, fake_telegram: FakeTelegram) -> Settings:
    return on_telegram(settings, False, fake_telegram)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_telegram: FakeTelegram, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_telegram, tmp_path) as harness:
        yield harness


async def answered(fake: FakeTelegram, text: str) -> None:
    """ada says ``text`` in her chat and is answered: every update before it was handled."""
    await fake.user_says(fake.private, "ada", text)
    await fake.wait_until(lambda: f"echo: {text}" in fake.state.texts(fake.private.id))


async def test_text_telegram_could_not_send_is_ignored_and_nothing_stored(
    parley: Harness, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="parley.channels.telegram")
    chat = fake_telegram.private
    await fake_telegram.user_says(chat, "ada", "x" * 100_000)
    await fake_telegram.user_says(chat, "ada", "nul\x00byte")
    await fake_telegram.user_says(chat, "stranger", "y" * 100_000)
    await fake_telegram.wait_until(lambda: not fake_telegram.state.updates)
    await fake_telegram.wait_until(lambda: len(fake_telegram.state.calls_to("getUpdates")) > 2)
    assert await texts_of(parley, "scribe") == []
    assert (await call(parley, "GET", "/deliveries"))["items"] == []
    assert (await account_row(parley))["last_inbound_at"] is None
    assert fake_telegram.state.bot_said(chat.id) == []
    ignored = [r for r in caplog.records if "too long or NUL" in r.getMessage()]
    assert len(ignored) == 3
    await answered(fake_telegram, "and now?")
    assert await texts_of(parley, "scribe") == ["and now?"]


async def test_unreadable_and_unasked_updates_are_skipped_and_the_poll_goes_on(
    parley: Harness, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="parley.channels.telegram")
    fake = fake_telegram
    await fake.inject({"message": {"message_id": "not a number", "chat": "nowhere"}})
    await fake.inject({"message": {"text": "no chat, no sender"}})
    await fake.inject({"message": "not an object"})
    await fake.inject(
        {"callback_query": {"id": "1", "from": fake.state.user("ada").json(), "chat_instance": "x"}}
    )
    await fake.inject({"my_chat_member": {"whatever": True}})
    fake.state.updates.append({"update_id": "forged", "message": {}})  # no usable id
    await answered(fake, "still here")
    assert await texts_of(parley, "scribe") == ["still here"]
    assert fake.state.bot_said(fake.private.id)[-1].text == "echo: still here"
    said = [r.getMessage() for r in caplog.records]
    assert sum("unreadable, ignored" in line for line in said) >= 2
    assert any("is no message, ignored" in line for line in said)
    assert any("without an id, ignored" in line for line in said)
    polls = fake.state.calls_to("getUpdates")
    assert polls[-1].body.get("offset", 0) > 5  # each confirmed: none asked for again


async def test_a_reply_to_a_message_of_no_chain_is_said_in_the_chat(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    chat = fake_telegram.private
    first = await fake_telegram.user_says(chat, "ada", "first")
    await fake_telegram.wait_until(lambda: "echo: first" in fake_telegram.state.texts(chat.id))
    await fake_telegram.user_says(chat, "ada", "about that", reply_to=first)
    await fake_telegram.wait_until(lambda: "echo: about that" in fake_telegram.state.texts(chat.id))
    echoed = fake_telegram.state.messages[chat.id][-1]
    assert echoed.reply_to is None  # in the chat, not in a chain
    assert (await call(parley, "GET", "/bindings"))["items"] == []
