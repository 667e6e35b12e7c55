"""Parley stopped between "the completion's post is in the outbox" and "sent" (the fake cut
the connection of its sendMessage before taking it: Parley cannot know whether Telegram took
it), then started again on the same store: each post reaches its forum topic once. And a bound
reply chain is followed after a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.telegram.fake_telegram import FakeTelegram
from tests.channels.telegram.on_telegram import (
    adapter,
    on_telegram,
    parley_on,
    place,
    scribe_on,
    set_up_account,
    texts_of,
)
from tests.channels.telegram.test_telegram_threads import completions, go
from tests.channels.test_bound_completions import MANAGER, answer_both, deliveries_of, settled
from tests.runs.support import script
from tests.support import Harness, ManualClock, eventually


@pytest.fixture
def settings(settings: Settings, fake_telegram: FakeTelegram) -> Settings:
    return on_telegram(settings, True, fake_telegram)


async def test_a_post_written_but_not_sent_is_delivered_once_after_a_restart(
    settings: Settings, clock: ManualClock, fake_telegram: FakeTelegram, tmp_path: Path
) -> None:
    async def setup(harness: Harness) -> None:
        await harness.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await harness.hire("ann", human="owner")
        await harness.hire("bob", human="owner")
        await set_up_account(harness, fake_telegram, "manager")

    forum = fake_telegram.forum
    async with parley_on(settings, clock, fake_telegram, setup) as parley:
        turns = await go(parley, fake_telegram, forum)
        assert await eventually(lambda: settled(parley, "channel_thread", 2))
        fake_telegram.drop_next("sendMessage", times=2)
        await answer_both(parley, turns)

        async def both_tried_and_waiting() -> bool:
            posts = await deliveries_of(parley, "channel_post")
            return len(posts) == 2 and all(
                p["state"] == "pending" and p["attempts"] == 1 and p["last_error"] for p in posts
            )

        assert await eventually(both_tried_and_waiting)
    topics = sorted(forum.topics)
    assert [completions(fake_telegram.state.texts(forum.id, t)) for t in topics] == [[], []]

    async with parley_on(settings, clock, fake_telegram) as parley:

        async def delivered() -> bool:
            clock.advance(seconds=600)  # past any backoff
            parley.context.runtime.outbox.wake()
            return await settled(parley, "channel_post", 2)

        assert await eventually(delivered)
    for topic in topics:
        (text,) = completions(fake_telegram.state.texts(forum.id, topic))
        assert text.endswith("done: done")
    assert completions(fake_telegram.state.texts(forum.id)) == []
    sends = fake_telegram.state.calls_to("sendMessage")
    assert [c.status for c in sends] == [0, 0, 200, 200]


async def test_a_bound_reply_chain_is_still_followed_after_a_restart(
    settings: Settings, clock: ManualClock, fake_telegram: FakeTelegram, tmp_path: Path
) -> None:
    """What the adapter remembers of chains is gone with the server; a reply to the root of a
    bound chain is known by its binding."""
    fake, chat = fake_telegram, fake_telegram.private
    async with scribe_on(settings, clock, fake, tmp_path) as parley:
        chain = await adapter(parley).create_thread(place(chat.id), "side talk", "thread:k")
        root = int(chain.conversation_id.split("/r")[1])
        await fake.user_says(chat, "ada", "/focus scribe", reply_to=root)
        await fake.wait_until(lambda: len(fake.state.bot_said(chat.id)) == 2)

    async with parley_on(settings, clock, fake) as parley:
        await fake.user_says(chat, "ada", "still the chain?", reply_to=root)
        await fake.wait_until(lambda: "echo: still the chain?" in fake.state.texts(chat.id))
        echoed = fake.state.messages[chat.id][-1]
        assert echoed.reply_to is not None and echoed.reply_to.message_id == root
        assert await texts_of(parley, "scribe") == ["still the chain?"]
