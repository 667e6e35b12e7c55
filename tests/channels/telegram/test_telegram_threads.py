"""Threads and bindings on Telegram, against the fake through python-telegram-bot, Parley in
process (SQLite and PostgreSQL). With ``channels.telegram.thread_bindings.spawn_subagent_sessions``
on, each subtask spawned with a thread gets a forum topic (in a forum supergroup) or a reply
chain hanging from an intro (in a private chat), bound to its session, and its completion goes
there only, once; off (the default), a Telegram user sees what they saw without bindings.
``/focus`` binds a place by hand (``/focus@BotName`` too), answered in a reply; only who bound
it may ``/unfocus``; a focused session's completion goes to its topic only; an idle binding
gets a farewell; a topic closed, or gone when posted to, ends its binding."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from parley.channels.sweeper import sweep_bindings
from parley.errors import NotFound
from parley.settings import Settings
from tests.channels.telegram.fake_state import FakeChat
from tests.channels.telegram.fake_telegram import FakeTelegram
from tests.channels.telegram.on_telegram import (
    ECHO,
    account_row,
    adapter,
    link,
    moment,
    on_telegram,
    parley_on,
    place,
    set_up_account,
    texts_of,
)
from tests.channels.test_bound_completions import MANAGER, answer_both, deliveries_of, settled
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def spawn_threads() -> bool:
    return True


@pytest.fixture
def idle_timeout() -> float | None:
    return None


@pytest.fixture
def settings(
    settings: Settings, spawn_threads: bool, idle_timeout: float | None, fake_telegram: FakeTelegram
) -> Settings:
    return on_telegram(settings, spawn_threads, fake_telegram, idle_timeout)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_telegram: FakeTelegram, tmp_path: Path
) -> AsyncIterator[Harness]:
    async def setup(harness: Harness) -> None:
        await harness.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await harness.hire("scribe", brain=script(tmp_path, "scribe", ECHO))
        await harness.hire("ann", human="owner")
        await harness.hire("bob", human="owner")
        await set_up_account(harness, fake_telegram, "manager")

    async with parley_on(settings, clock, fake_telegram, setup) as harness:
        yield harness


async def go(parley: Harness, fake: FakeTelegram, chat: FakeChat) -> list[dict[str, Any]]:
    """ada says 'go' in ``chat``: the manager spawns two subtasks asked with a thread; their
    workers' waiting turns."""
    await fake.user_says(chat, "ada", "go")

    async def both_waiting() -> bool:
        return len((await call(parley, "GET", "/me/turns"))["items"]) == 2

    assert await eventually(both_waiting)
    turns: list[dict[str, Any]] = (await call(parley, "GET", "/me/turns"))["items"]
    return turns


def completions(texts: list[str]) -> list[str]:
    return [t for t in texts if t.startswith("subtask")]


async def test_two_bound_sessions_each_deliver_to_their_own_forum_topic_once(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    forum = fake_telegram.forum
    turns = await go(parley, fake_telegram, forum)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    assert sorted(forum.topics.values()) == sorted(
        f"{turn['run']['agent']}: task {turn['run']['topic_id']}" for turn in turns
    )
    bindings = (await call(parley, "GET", "/bindings"))["items"]
    assert {b["conversation"]["conversation_id"] for b in bindings} == {
        f"{forum.id}/{topic}" for topic in forum.topics
    }
    assert {b["conversation"]["parent_conversation_id"] for b in bindings} == {str(forum.id)}

    await answer_both(parley, turns)  # both finish together
    assert await eventually(lambda: settled(parley, "channel_post", 2))
    for binding in bindings:
        topic = int(binding["conversation"]["conversation_id"].split("/")[1])
        task = binding["session"].removeprefix("topic:")
        (posted,) = fake_telegram.state.texts(forum.id, topic)[1:]  # after "topic created"
        assert posted.startswith(f"subtask {task} (")
    assert fake_telegram.state.texts(forum.id) == ["go"]  # nothing in the main conversation
    routes = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in routes} == {("bound", "requester-thread")}


async def test_in_a_private_chat_each_thread_is_a_reply_chain(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    chat = fake_telegram.private
    turns = await go(parley, fake_telegram, chat)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    intros = fake_telegram.state.bot_said(chat.id)
    assert len(intros) == 2 and all("answers come as replies" in (m.text or "") for m in intros)
    bindings = (await call(parley, "GET", "/bindings"))["items"]
    assert {b["conversation"]["conversation_id"] for b in bindings} == {
        f"{chat.id}/r{m.message_id}" for m in intros
    }
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "channel_post", 2))
    for binding in bindings:
        root = int(binding["conversation"]["conversation_id"].split("/r")[1])
        task = binding["session"].removeprefix("topic:")
        (posted,) = [
            m
            for m in fake_telegram.state.bot_said(chat.id)
            if m.reply_to is not None and m.reply_to.message_id == root
        ]
        assert (posted.text or "").startswith(f"subtask {task} (")
    # the main conversation: what ada said, the intros and the completions as replies only
    unreplied = [m.text for m in fake_telegram.state.messages[chat.id] if m.reply_to is None]
    assert completions([t or "" for t in unreplied]) == []


@pytest.mark.parametrize("spawn_threads", [False])
async def test_with_the_spawn_setting_off_a_telegram_user_sees_no_change(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    turns = await go(parley, fake_telegram, fake_telegram.forum)
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert fake_telegram.forum.topics == {}
    assert fake_telegram.state.texts(fake_telegram.forum.id) == ["go"]
    assert fake_telegram.state.calls_to("createForumTopic") == []
    assert await deliveries_of(parley, "channel_thread") == []
    assert (await call(parley, "GET", "/bindings"))["items"] == []
    routes = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in routes} == {("fallback", "no-active-binding")}


@pytest.mark.parametrize("spawn_threads", [False])
async def test_focus_in_a_topic_binds_it_and_only_who_bound_it_unfocuses(
    parley: Harness, fake_telegram: FakeTelegram, clock: ManualClock
) -> None:
    fake, forum = fake_telegram, fake_telegram.forum
    await call(parley, "POST", "/people", name="bea")
    await link(parley, fake, "bea", "bea")
    topic = fake.add_topic("with scribe")
    command = await fake.user_says(forum, "ada", "/focus@parley_bot scribe", thread_id=topic)
    await fake.wait_until(lambda: len(fake.state.texts(forum.id, topic)) == 3)
    answer = fake.state.messages[forum.id][-1]
    assert answer.reply_to is not None and answer.reply_to.message_id == command
    assert (answer.text or "").startswith("Bound here to topic:")
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["conversation"]["conversation_id"] == f"{forum.id}/{topic}"
    assert binding["bound_by"] == f"telegram:{fake.state.user('ada').id}"

    clock.advance(hours=1)
    await fake.user_says(forum, "ada", "hello scribe", thread_id=topic)
    await fake.wait_until(lambda: "echo: hello scribe" in fake.state.texts(forum.id, topic))
    assert await texts_of(parley, "scribe") == ["hello scribe"]
    assert fake.state.texts(forum.id) == []  # nothing in General

    async def touched() -> bool:  # the reply's post touched the binding and the account
        (now,) = (await call(parley, "GET", "/bindings"))["items"]
        sent = (await account_row(parley))["last_outbound_at"]
        return sent is not None and moment(now["last_activity_at"]) == clock.now() == moment(sent)

    assert await eventually(touched)

    await fake.user_says(forum, "bea", "/unfocus", thread_id=topic)
    await fake.wait_until(
        lambda: "only who bound it" in (fake.state.messages[forum.id][-1].text or "")
    )
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["status"] == "active"
    await fake.user_says(forum, "ada", "/unfocus", thread_id=topic)
    await fake.wait_until(lambda: "Unbound from" in (fake.state.messages[forum.id][-1].text or ""))
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert (binding["status"], binding["ended_reason"]) == ("ended", "unfocus")


@pytest.mark.parametrize("spawn_threads", [False])
async def test_a_reply_chain_is_followed_through_replies(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    """A chain made in ada's private chat, focused on scribe by a reply to its root: a reply to
    the bot's answer there is said in the chain; a message not replying is said in the chat."""
    fake, chat = fake_telegram, fake_telegram.private
    chain = await adapter(parley).create_thread(place(chat.id), "side talk", "thread:k")
    root = int(chain.conversation_id.split("/r")[1])
    await fake.user_says(chat, "ada", "/focus scribe", reply_to=root)
    await fake.wait_until(lambda: len(fake.state.bot_said(chat.id)) == 2)
    answer = fake.state.bot_said(chat.id)[1]
    await fake.user_says(chat, "ada", "in the chain", reply_to=answer.message_id)
    await fake.wait_until(lambda: "echo: in the chain" in fake.state.texts(chat.id))
    echoed = fake.state.messages[chat.id][-1]
    assert echoed.reply_to is not None and echoed.reply_to.message_id == root
    assert await texts_of(parley, "scribe") == ["in the chain"]
    await fake.user_says(chat, "ada", "in the chat")  # the manager, the default agent, has it
    assert await eventually(lambda: _has(parley, "manager", "in the chat"))
    assert await texts_of(parley, "scribe") == ["in the chain"]
    # the same key gives back the same chain
    again = await adapter(parley).create_thread(place(chat.id), "side talk", "thread:k")
    assert again == chain and fake.state.calls_to("getChat") == []


@pytest.mark.parametrize("spawn_threads", [False])
async def test_a_focused_session_s_completion_resolves_only_to_its_topic(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    fake, forum = fake_telegram, fake_telegram.forum
    turns = await go(parley, fake, forum)
    first, second = (turn["run"] for turn in turns)
    topic = fake.add_topic("ann's part")
    target = f"topic:{first['topic_id']}"
    await fake.user_says(forum, "ada", f"/focus {target}", thread_id=topic)
    await fake.wait_until(lambda: len(fake.state.texts(forum.id, topic)) == 3)
    assert target in fake.state.texts(forum.id, topic)[2]

    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "channel_post", 1))
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert completions(fake.state.texts(forum.id, topic)) == [
        f"subtask {first['topic_id']} ({first['agent']}) done: done"
    ]
    assert fake.state.texts(forum.id) == ["go"]
    routes = {
        (c["key"].split(":")[1], c["mode"], c["reason"])
        for c in await deliveries_of(parley, "task_completion")
    }
    assert routes == {
        (str(first["topic_id"]), "bound", "requester-thread"),
        (str(second["topic_id"]), "fallback", "no-active-binding"),
    }


@pytest.mark.parametrize(("spawn_threads", "idle_timeout"), [(False, 3600.0)])
async def test_an_idle_bound_topic_gets_a_farewell_from_the_sweep(
    parley: Harness, fake_telegram: FakeTelegram, clock: ManualClock
) -> None:
    fake, forum = fake_telegram, fake_telegram.forum
    topic = fake.add_topic("with scribe")
    await fake.user_says(forum, "ada", "/focus scribe", thread_id=topic)
    await fake.wait_until(lambda: len(fake.state.texts(forum.id, topic)) == 3)
    clock.advance(minutes=59)
    assert await sweep_bindings(parley.context.store, clock) == []
    clock.advance(minutes=1)
    assert len(await sweep_bindings(parley.context.store, clock)) == 1
    await fake.wait_until(lambda: len(fake.state.texts(forum.id, topic)) == 4)
    assert "idle-timeout" in fake.state.texts(forum.id, topic)[3]
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["ended_reason"] == "idle-timeout"


async def _has(parley: Harness, agent: str, text: str) -> bool:
    return text in await texts_of(parley, agent)


async def test_a_closed_or_deleted_topic_ends_its_binding(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    forum = fake_telegram.forum
    await go(parley, fake_telegram, forum)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    closed, deleted = sorted(forum.topics)
    await fake_telegram.user_says(forum, "ada", None, thread_id=closed, forum_topic_closed={})
    fake_telegram.delete_topic(deleted)
    with pytest.raises(NotFound, match=r"(?i)message thread not found"):
        await adapter(parley).post(place(f"{forum.id}/{deleted}", forum.id), "hi", "ann", "k:1")

    async def both_ended() -> bool:
        bindings = (await call(parley, "GET", "/bindings"))["items"]
        return {b["status"] for b in bindings} == {"ended"}

    assert await eventually(both_ended)
    reasons = {
        b["conversation"]["conversation_id"]: b["ended_reason"]
        for b in (await call(parley, "GET", "/bindings"))["items"]
    }
    assert reasons == {
        f"{forum.id}/{closed}": "thread-archived",
        f"{forum.id}/{deleted}": "thread-deleted",
    }
