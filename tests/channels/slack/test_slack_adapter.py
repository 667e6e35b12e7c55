"""The Slack adapter against the fake Slack, slack_sdk in between (Web API and Socket Mode),
Parley in process: a linked person's message reaches the default agent and its reply comes back
in the same channel or thread, marked with its key; a repeated post with the same key posts
once, also after Slack took it and the answer was lost; long text goes in parts; echoes, other
bots', edits and service messages are never taken as text; the newest tokens after rotation are
used; a post records the account's activity and touches its binding."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.slack.fake_slack import BOT_ID, GENERAL, PEOPLE, FakeSlack
from tests.channels.slack.on_slack import (
    ACCOUNT,
    account_row,
    adapter,
    moment,
    on_slack,
    place,
    scribe_on,
)
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def settings(settings: Settings, fake_slack: FakeSlack) -> Settings:
    return on_slack(settings, False, fake_slack)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_slack: FakeSlack, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_slack, tmp_path) as harness:
        yield harness


async def texts_said_to_scribe(parley: Harness) -> list[str]:
    conversation = await call(parley, "GET", "/conversations/scribe")
    return [m["body"] for m in conversation["messages"]["items"] if m["kind"] == "text"]


async def test_a_person_s_message_is_answered_in_its_channel(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    await fake_slack.user_says("ada", "hello")
    await fake_slack.wait_until(lambda: fake_slack.texts() == ["echo: hello"])
    (answer,) = fake_slack.posts()
    assert answer.username == "scribe" and answer.thread_ts is None
    assert answer.metadata is not None and answer.metadata["event_type"] == "parley_post"

    async def posted_recorded() -> bool:  # recorded just after Slack took the post
        return (await account_row(parley))["last_outbound_at"] is not None

    assert await eventually(posted_recorded)
    row = await account_row(parley)
    assert row["has_token"] is True and "xoxb" not in str(row)
    assert row["last_inbound_at"] is not None
    assert len(fake_slack.acks) == 2  # ada's message and the echo of the answer, both acked


async def test_a_message_in_a_thread_is_answered_in_that_thread(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    top = await fake_slack.user_says("ada", "a topic")
    await fake_slack.wait_until(lambda: len(fake_slack.texts()) == 1)
    await fake_slack.user_says("ada", "in the thread", thread_ts=top)
    await fake_slack.wait_until(lambda: len(fake_slack.texts(GENERAL, top)) == 1)
    assert fake_slack.texts(GENERAL, top) == ["echo: in the thread"]
    assert fake_slack.texts() == ["echo: a topic"]


async def test_a_repeated_post_with_the_same_key_posts_once(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    first = await adapter(parley).post(place(), "once", None, "reply:42")
    again = await adapter(parley).post(place(), "once", None, "reply:42")
    assert first == again
    assert fake_slack.texts() == ["once"]
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


async def test_a_post_slack_took_whose_answer_was_lost_is_found_not_posted_again(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    fake_slack.drop_next("chat.postMessage", taken=True)
    with pytest.raises(Exception, match="Slack could not be reached"):
        await adapter(parley).post(place(), "lost answer", "scribe", "k:lost")
    ts = await adapter(parley).post(place(), "lost answer", "scribe", "k:lost")
    (posted,) = fake_slack.posts()
    assert (posted.text, posted.ts) == ("lost answer", ts)
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
    # a new adapter (as after a restart) knows nothing, and still finds it
    fresh = type(adapter(parley))(adapter(parley)._manager, parley.clock)
    assert await fresh.post(place(), "lost answer", "scribe", "k:lost") == ts
    assert len(fake_slack.posts()) == 1


async def test_a_cut_call_slack_did_not_take_is_posted_on_the_retry(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    fake_slack.drop_next("chat.postMessage")
    with pytest.raises(Exception, match="Slack could not be reached"):
        await adapter(parley).post(place(), "again", None, "k:cut")
    await adapter(parley).post(place(), "again", None, "k:cut")
    assert fake_slack.texts() == ["again"]


async def test_long_text_goes_in_parts_each_with_its_own_key(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    text = "a" * 4000 + "b" * 4000 + "c"
    await adapter(parley).post(place(), text, None, "k:long")
    fake_slack.drop_next("chat.postMessage")  # nothing is posted again: each part is found
    await type(adapter(parley))(adapter(parley)._manager, parley.clock).post(
        place(), text, None, "k:long"
    )
    posts = fake_slack.posts()
    assert [p.text for p in posts] == ["a" * 4000, "b" * 4000, "c"]
    keys = [p.metadata["event_payload"]["key"] for p in posts if p.metadata]
    assert keys == ["k:long", "k:long:1", "k:long:2"]


async def test_unknown_users_are_refused_and_echoes_bots_and_edits_are_not_text(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    await fake_slack.user_says("stranger", "let me in")
    await fake_slack.user_says("U0OTHERAPP", "ping", bot_id="B0OTHER")
    await fake_slack.user_says("ada", "", subtype="channel_join")
    await fake_slack.user_says("ada", "edited", subtype="message_changed")
    await fake_slack.user_says("ada", "gone", subtype="message_deleted")
    await fake_slack.user_says("ada", "hello")
    await fake_slack.wait_until(lambda: len(fake_slack.posts()) == 2)
    refusal, answer = sorted(fake_slack.texts())
    assert answer == "echo: hello"
    assert f"slack user {PEOPLE['stranger']}" in refusal
    assert await texts_said_to_scribe(parley) == ["hello"]
    assert all(p.bot_id == BOT_ID for p in fake_slack.posts())


async def test_the_newest_tokens_are_used_after_rotation(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    used = adapter(parley)
    old = fake_slack.bot_token
    await used.post(place(), "before", None, "k:1")
    new = fake_slack.rotate_tokens()
    await call(parley, "PUT", f"/channels/slack/accounts/{ACCOUNT}/token", token=new)
    reused = adapter(parley)
    assert reused is used
    await reused.post(place(), "after", None, "k:2")
    posts = fake_slack.calls_to("chat.postMessage")
    assert [(c.token, c.status) for c in posts] == [(old, 200), (fake_slack.bot_token, 200)]
    # Slack asks for a new connection: the next socket is opened with the new app token
    opened = fake_slack.connections
    await fake_slack.send_disconnect()
    await fake_slack.wait_until(lambda: fake_slack.reopened(opened))
    opens = fake_slack.calls_to("apps.connections.open")
    assert opens[-1].token == fake_slack.app_token and opens[-1].status == 200
    await fake_slack.user_says("ada", "still there?")
    await fake_slack.wait_until(lambda: "echo: still there?" in fake_slack.texts())


async def test_a_dropped_socket_is_opened_again(parley: Harness, fake_slack: FakeSlack) -> None:
    opened = fake_slack.connections
    await fake_slack.drop_sockets()
    await fake_slack.wait_until(lambda: fake_slack.reopened(opened))
    await fake_slack.user_says("ada", "back?")
    await fake_slack.wait_until(lambda: "echo: back?" in fake_slack.texts())


async def test_a_post_records_activity_and_touches_its_binding(
    parley: Harness, fake_slack: FakeSlack, clock: ManualClock
) -> None:
    envelope = await fake_slack.run_command("ada", "/focus", "scribe")
    await fake_slack.wait_until(lambda: envelope in fake_slack.acks)
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    clock.advance(hours=1)
    await adapter(parley).post(place(), "as myself", "scribe", "k:persona")
    row = await account_row(parley)
    assert moment(row["last_outbound_at"]) == clock.now()
    (touched,) = (await call(parley, "GET", "/bindings"))["items"]
    assert moment(touched["last_activity_at"]) == clock.now()
    assert moment(binding["last_activity_at"]) < clock.now()
