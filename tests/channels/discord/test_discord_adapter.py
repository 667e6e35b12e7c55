"""The Discord adapter against the fake Discord, discord.py in between, Parley in process: a
linked person's message reaches the default agent and its reply comes back plain (with the
outbox key as nonce, so a repeated attempt posts once); echoes are never taken as text; the
manager reused after a token rotation uses the newest token; an event parsed once the bot has
closed is dropped; a webhook persona's post records the account's activity and touches its
binding."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.discord.fake_discord import FakeDiscord
from tests.channels.discord.on_discord import (
    ACCOUNT,
    MESSAGES,
    adapter,
    moment,
    on_discord,
    place,
    scribe_on,
)
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def settings(settings: Settings, fake_discord: FakeDiscord) -> Settings:
    return on_discord(settings, False, fake_discord)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_discord: FakeDiscord, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_discord, tmp_path) as harness:
        yield harness


async def account_row(parley: Harness) -> dict[str, object]:
    rows = await call(parley, "GET", "/channels/accounts")
    (row,) = [r for r in rows if r["channel"] == "discord"]
    return dict(row)


async def test_a_person_s_message_is_answered_plainly_in_its_channel(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    general = fake_discord.channel.id
    await fake_discord.user_says(general, "ada", "hello")
    await fake_discord.wait_until(lambda: len(fake_discord.state.texts(general)) == 2)
    _, answer = fake_discord.state.messages[general]
    assert (answer.author.id, answer.content, answer.webhook_id) == (
        fake_discord.state.bot.id,
        "echo: hello",
        None,
    )
    assert answer.nonce is not None and len(answer.nonce) <= 25

    async def posted_recorded() -> bool:  # recorded just after Discord took the post
        return (await account_row(parley))["last_outbound_at"] is not None

    assert await eventually(posted_recorded)
    row = await account_row(parley)
    assert row["has_token"] is True and "token" not in row
    assert row["last_inbound_at"] is not None


async def test_a_repeated_post_with_the_same_key_posts_once(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    general = place(fake_discord.channel.id)
    first = await adapter(parley).post(general, "once", None, "reply:42")
    again = await adapter(parley).post(general, "once", None, "reply:42")
    assert first == again
    assert fake_discord.state.texts(fake_discord.channel.id) == ["once"]
    assert [c.status for c in fake_discord.state.calls_to("POST", MESSAGES)] == [200, 200]


async def test_an_unknown_user_is_refused_with_a_post_and_echoes_are_not_text(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    general = fake_discord.channel.id
    await fake_discord.user_says(general, "stranger", "let me in")
    await fake_discord.user_says(general, "someone's hook", "ping", webhook_id=4242)
    await fake_discord.user_says(general, "ada", "", type=7)  # a member joined
    await fake_discord.user_says(general, "ada", "hello")
    bot = fake_discord.state.bot.id
    messages = fake_discord.state.messages[general]
    await fake_discord.wait_until(lambda: sum(m.author.id == bot for m in messages) == 2)
    said = [m.content for m in messages if m.author.id != bot]
    refusal, answer = sorted(m.content for m in messages if m.author.id == bot)
    assert said == ["let me in", "ping", "", "hello"]
    assert f"discord user {fake_discord.state.user('stranger').id}" in refusal
    assert answer == "echo: hello"
    # only ada's text reached the agent: the hook's, the join's and the bot's own posts did not
    conversation = await call(parley, "GET", "/conversations/scribe")
    said = [m["body"] for m in conversation["messages"]["items"] if m["kind"] == "text"]
    assert said == ["hello"]


async def test_reusing_the_manager_uses_the_newest_token_after_rotation(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    general = place(fake_discord.channel.id)
    used = adapter(parley)
    old = fake_discord.token
    await used.post(general, "before", None, "k:1")
    new = await fake_discord.rotate_token(end_sessions=False)
    await call(parley, "PUT", f"/channels/discord/accounts/{ACCOUNT}/token", token=new)
    reused = adapter(parley)
    assert reused is used
    await reused.post(general, "after", None, "k:2")
    posts = fake_discord.state.calls_to("POST", MESSAGES)
    assert [(c.token, c.status) for c in posts] == [(old, 200), (new, 200)]
    assert fake_discord.state.texts(fake_discord.channel.id) == ["before", "after"]


async def test_a_rotation_that_ends_the_gateway_session_reconnects_with_the_new_token(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    new = await fake_discord.rotate_token(new_token="rotated-token", end_sessions=False)
    await call(parley, "PUT", f"/channels/discord/accounts/{ACCOUNT}/token", token=new)
    await fake_discord.gateway.end_sessions_of("fake-bot-token")
    await fake_discord.wait_until(lambda: fake_discord.gateway.identifies == 2)
    general = fake_discord.channel.id
    await fake_discord.user_says(general, "ada", "still there?")
    await fake_discord.wait_until(lambda: "echo: still there?" in fake_discord.state.texts(general))
    assert {s.token for s in fake_discord.gateway.sessions.values()} == {new}


async def test_an_event_parsed_once_the_bot_has_closed_is_dropped_quietly(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    """A rotation or a stop closes the bot while the gateway's last frames are still read:
    discord.py's loop is then a sentinel that raises when used, and an event parsed then made
    its handler's coroutine, raised out of the session and left the coroutine unawaited."""
    await fake_discord.wait_until(lambda: fake_discord.gateway.identifies == 1)
    bot = adapter(parley)._manager.client
    assert bot is not None
    await bot.close()
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("ignore")  # others' (an unclosed transport freed meanwhile)
        warnings.simplefilter("always", RuntimeWarning)  # a coroutine never awaited
        bot.dispatch("connect")
    assert [str(w.message) for w in warned] == []


async def test_a_webhook_persona_post_records_activity_and_touches_its_binding(
    parley: Harness, fake_discord: FakeDiscord, clock: ManualClock
) -> None:
    thread = await fake_discord.user_starts_thread(fake_discord.channel.id, "ada", "with scribe")
    await fake_discord.user_runs_command(thread.id, "ada", "focus", {"target": "scribe"})
    await fake_discord.wait_until(lambda: len(fake_discord.state.replies) == 1)
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    clock.advance(hours=1)
    await adapter(parley).post(
        place(thread.id, fake_discord.channel.id), "as myself", "scribe", "k:persona"
    )
    (posted,) = fake_discord.state.messages[thread.id]
    assert posted.webhook_id is not None and posted.persona_username == "scribe"
    assert posted.persona_avatar_url == "https://example.invalid/avatars/scribe.png"
    row = await account_row(parley)
    assert moment(row["last_outbound_at"]) == clock.now()
    (touched,) = (await call(parley, "GET", "/bindings"))["items"]
    assert moment(touched["last_activity_at"]) == clock.now()
    assert moment(binding["last_activity_at"]) < clock.now()
