"""The Telegram adapter against the fake Telegram, python-telegram-bot in between, Parley in
process (SQLite and PostgreSQL): a linked person's message reaches the default agent and its
reply comes back in the same chat; an unknown user is refused with a post; what is no person's
text is never taken; a repeated post with the same key posts once; long text is split at
Telegram's limit; a repeated thread with the same key is made once; the newest token is used
after a rotation, by the sender and the long poll."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.errors import Invalid, Unavailable
from parley.settings import Settings
from tests.channels.telegram.fake_telegram import FakeTelegram
from tests.channels.telegram.on_telegram import (
    ACCOUNT,
    account_row,
    adapter,
    on_telegram,
    place,
    scribe_on,
    texts_of,
)
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def settings(settings: Settings, fake_telegram: FakeTelegram) -> Settings:
    return on_telegram(settings, False, fake_telegram)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_telegram: FakeTelegram, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_telegram, tmp_path) as harness:
        yield harness


async def test_a_person_s_message_is_answered_in_its_chat(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    chat = fake_telegram.private
    await fake_telegram.user_says(chat, "ada", "hello")
    await fake_telegram.wait_until(lambda: len(fake_telegram.state.texts(chat.id)) == 2)
    _, answer = fake_telegram.state.messages[chat.id]
    assert (answer.author, answer.text, answer.reply_to) == (
        fake_telegram.state.bot,
        "echo: hello",
        None,
    )

    async def posted_recorded() -> bool:  # recorded just after Telegram took the post
        return (await account_row(parley))["last_outbound_at"] is not None

    assert await eventually(posted_recorded)
    row = await account_row(parley)
    assert row["has_token"] is True and row["state"] == "connected"
    assert row["last_inbound_at"] is not None
    polls = fake_telegram.state.calls_to("getUpdates")
    assert {(c.token, str(c.body["allowed_updates"])) for c in polls} == {
        (fake_telegram.token, "['message']")
    }
    assert await texts_of(parley, "scribe") == ["hello"]


async def test_a_repeated_post_with_the_same_key_posts_once(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    chat = place(fake_telegram.group.id)
    first = await adapter(parley).post(chat, "once", None, "reply:42")
    again = await adapter(parley).post(chat, "once", None, "reply:42")
    assert first == again
    assert fake_telegram.state.texts(fake_telegram.group.id) == ["once"]
    assert len(fake_telegram.state.calls_to("sendMessage")) == 1


async def test_long_text_is_split_and_a_retry_sends_only_the_missing_parts(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    group = fake_telegram.group.id
    text = "a" * 4096 + "😀" * 2048 + "end"  # an emoji is two of Telegram's 4096 units
    parts = ["a" * 4096, "😀" * 2048, "end"]
    fake_telegram.fail_next("sendMessage", 200)  # the first part passes, the second fails
    fake_telegram.fail_next("sendMessage", 502, "Bad Gateway")
    with pytest.raises(Unavailable, match="Bad Gateway"):
        await adapter(parley).post(place(group), text, None, "k:long")
    message_id = await adapter(parley).post(place(group), text, None, "k:long")
    assert fake_telegram.state.texts(group) == parts
    assert message_id == str(fake_telegram.state.messages[group][-1].message_id)
    sent = [c.status for c in fake_telegram.state.calls_to("sendMessage")]
    assert sent == [200, 502, 200, 200]


async def test_an_unknown_user_is_refused_and_no_person_s_text_is_taken(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    fake = fake_telegram
    group, bot = fake.group, fake.state.bot
    await fake.user_says(group, "stranger", "let me in")
    await fake.user_says(group, "parley_bot", "my own words")
    await fake.user_says(group, "other_bot", "beep", is_bot=True)
    await fake.user_says(group, "ada", None, new_chat_members=[fake.state.user("bea").json()])
    await fake.user_says(
        group, "ada", None, pinned_message={"message_id": 1, "date": 0, "chat": group.json()}
    )
    await fake.user_says(group, "ada", "for someone else", sender_chat=group.json())
    edited = fake.state.add_message(group, fake.state.user("ada"), "edited words")
    await fake.inject({"edited_message": edited.json()})
    await fake.inject({"channel_post": edited.json()})
    await fake.user_says(group, "ada", "/focus@other_bot scribe")
    await fake.user_says(group, "ada", "hello")
    await fake.wait_until(lambda: len(fake.state.bot_said(group.id)) == 3)
    refusal = fake.state.bot_said(group.id)[1].text or ""
    assert f"telegram user {fake.state.user('stranger').id}" in refusal
    assert fake.state.bot_said(group.id)[2].text == "echo: hello"
    assert await texts_of(parley, "scribe") == ["hello"]
    assert bot not in {m.author for m in fake.state.messages[group.id][2:] if m.text == "beep"}


async def test_the_newest_token_is_used_after_a_rotation(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    chat = place(fake_telegram.group.id)
    used = adapter(parley)
    old = fake_telegram.token
    await used.post(chat, "before", None, "k:1")
    new = await fake_telegram.rotate_token()
    await call(parley, "PUT", f"/channels/telegram/accounts/{ACCOUNT}/token", token=new)
    reused = adapter(parley)
    assert reused is used
    await reused.post(chat, "after", None, "k:2")
    posts = fake_telegram.state.calls_to("sendMessage")
    assert [(c.token, c.status) for c in posts] == [(old, 200), (new, 200)]
    # the long poll too: it asks with the new token, and what ada says is heard through it
    polls = fake_telegram.state.calls_to
    await fake_telegram.wait_until(lambda: polls("getUpdates")[-1].token == new)
    await fake_telegram.user_says(fake_telegram.private, "ada", "still there?")
    await fake_telegram.wait_until(
        lambda: "echo: still there?" in fake_telegram.state.texts(fake_telegram.private.id)
    )
    assert polls("getUpdates")[-1].token == new


async def test_a_repeated_thread_with_the_same_key_is_made_once(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    forum = fake_telegram.forum
    made = await adapter(parley).create_thread(place(forum.id), "plans", "thread:task:9")
    again = await adapter(parley).create_thread(place(forum.id), "plans", "thread:task:9")
    assert made == again == place(f"{forum.id}/{next(iter(forum.topics))}", forum.id)
    assert list(forum.topics.values()) == ["plans"]
    assert len(fake_telegram.state.calls_to("createForumTopic")) == 1
    with pytest.raises(Invalid, match="Telegram threads have no threads"):
        await adapter(parley).create_thread(made, "deeper", "thread:task:10")
