"""Subtasks spawned with a thread from a Discord conversation, against the fake Discord through
discord.py, Parley in process (SQLite and PostgreSQL): with
``channels.discord.thread_bindings.spawn_subagent_sessions`` on, each gets a thread under the
requester's channel, started from an intro, bound to its session, and its completion goes to
that thread only, through the persona webhook, once; off (the default), a Discord user sees
what they saw without bindings. /focus binds by hand; only who bound it may /unfocus; a thread
archived or deleted ends its binding."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from parley.settings import Settings
from tests.channels.discord.fake_discord import FakeDiscord
from tests.channels.discord.on_discord import on_discord, parley_on, set_up_account
from tests.channels.test_bound_completions import MANAGER, answer_both, deliveries_of, settled
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def spawn_threads() -> bool:
    return True


@pytest.fixture
def settings(settings: Settings, spawn_threads: bool, fake_discord: FakeDiscord) -> Settings:
    return on_discord(settings, spawn_threads, fake_discord)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_discord: FakeDiscord, tmp_path: Path
) -> AsyncIterator[Harness]:
    async def setup(harness: Harness) -> None:
        await harness.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await harness.hire("ann", human="owner")
        await harness.hire("bob", human="owner")
        await set_up_account(harness, fake_discord, "manager")

    async with parley_on(settings, clock, fake_discord, setup) as harness:
        yield harness


async def go(parley: Harness, fake: FakeDiscord) -> list[dict[str, Any]]:
    """ada says 'go' in #general: the manager spawns two subtasks asked with a thread; their
    workers' waiting turns."""
    await fake.user_says(fake.channel.id, "ada", "go")

    async def both_waiting() -> bool:
        return len((await call(parley, "GET", "/me/turns"))["items"]) == 2

    assert await eventually(both_waiting)
    turns: list[dict[str, Any]] = (await call(parley, "GET", "/me/turns"))["items"]
    return turns


def completion_texts(fake: FakeDiscord, channel_id: int) -> list[str]:
    return [t for t in fake.state.texts(channel_id) if t.startswith("subtask")]


async def test_two_bound_sessions_each_deliver_to_their_own_thread_once(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    turns = await go(parley, fake_discord)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    general = fake_discord.channel.id
    threads = fake_discord.state.threads()
    assert sorted(t.name for t in threads) == [
        f"{turn['run']['agent']}: task {turn['run']['topic_id']}"
        for turn in sorted(turns, key=lambda t: str(t["run"]["agent"]))
    ]
    assert {t.parent_id for t in threads} == {general}
    bindings = (await call(parley, "GET", "/bindings"))["items"]
    assert {b["conversation"]["conversation_id"] for b in bindings} == {str(t.id) for t in threads}

    await answer_both(parley, turns)  # both finish together
    assert await eventually(lambda: settled(parley, "channel_post", 2))
    for binding in bindings:
        thread = int(binding["conversation"]["conversation_id"])
        task = binding["session"].removeprefix("topic:")
        (posted,) = fake_discord.state.messages[thread]
        assert posted.content.startswith(f"subtask {task} (")
        assert posted.webhook_id is not None and posted.persona_username in ("ann", "bob")
    # the main channel has what ada said and the threads' intros; no completion
    assert completion_texts(fake_discord, general) == []
    said = fake_discord.state.messages[general]
    assert said[0].content == "go" and all(m.author.id == fake_discord.state.bot.id
                                           for m in said[1:])  # fmt: skip
    assert len(said) == 3
    # one persona webhook for the parent channel, reused by both threads
    assert len(fake_discord.state.webhooks) == 1
    completions = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in completions} == {("bound", "requester-thread")}


@pytest.mark.parametrize("spawn_threads", [False])
async def test_with_the_spawn_setting_off_a_discord_user_sees_no_change(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    turns = await go(parley, fake_discord)
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert fake_discord.state.threads() == []
    assert fake_discord.state.webhooks == {}
    assert fake_discord.state.texts(fake_discord.channel.id) == ["go"]
    assert await deliveries_of(parley, "channel_thread") == []
    assert (await call(parley, "GET", "/bindings"))["items"] == []
    completions = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in completions} == {("fallback", "no-active-binding")}


@pytest.mark.parametrize("spawn_threads", [False])
async def test_a_focused_session_s_completion_resolves_only_to_its_thread(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    turns = await go(parley, fake_discord)
    first, second = (turn["run"] for turn in turns)
    thread = await fake_discord.user_starts_thread(fake_discord.channel.id, "ada", "ann's part")
    target = f"topic:{first['topic_id']}"
    await fake_discord.user_runs_command(thread.id, "ada", "focus", {"target": target})
    await fake_discord.wait_until(lambda: len(fake_discord.state.replies) == 1)
    assert target in fake_discord.state.replies[0].data["content"]

    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "channel_post", 1))
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert completion_texts(fake_discord, thread.id) == [
        f"subtask {first['topic_id']} ({first['agent']}) done: done"
    ]
    assert fake_discord.state.texts(fake_discord.channel.id) == ["go"]
    routes = {
        (c["key"].split(":")[1], c["mode"], c["reason"])
        for c in await deliveries_of(parley, "task_completion")
    }
    assert routes == {
        (str(first["topic_id"]), "bound", "requester-thread"),
        (str(second["topic_id"]), "fallback", "no-active-binding"),
    }


async def a_thread_ada_focused(parley: Harness, fake: FakeDiscord) -> tuple[Any, list[Any]]:
    """bea linked to a person of her own; a thread ada started and focused on her conversation
    with the manager: the thread, and the replies to commands so far (ada's focus)."""
    bea = fake.state.user("bea")
    await call(parley, "POST", "/people", name="bea")
    await call(parley, "PUT", f"/channels/discord/accounts/bot/identities/{bea.id}", person="bea")
    thread = await fake.user_starts_thread(fake.channel.id, "ada", "talk")
    replies = fake.state.replies
    await fake.user_runs_command(thread.id, "ada", "focus", {"target": "manager"})
    await fake.wait_until(lambda: len(replies) == 1)
    return thread, replies


async def test_only_who_focused_may_unfocus(parley: Harness, fake_discord: FakeDiscord) -> None:
    thread, replies = await a_thread_ada_focused(parley, fake_discord)
    await fake_discord.user_runs_command(thread.id, "bea", "unfocus")
    await fake_discord.wait_until(lambda: len(replies) == 2)
    assert "only who bound it" in replies[1].data["content"]
    assert replies[1].data["flags"] == 64  # seen by bea only
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert (
        binding["status"] == "active"
        and binding["bound_by"] == f"discord:{fake_discord.state.user('ada').id}"
    )

    await fake_discord.user_runs_command(thread.id, "ada", "unfocus")
    await fake_discord.wait_until(lambda: len(replies) == 3)
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert (binding["status"], binding["ended_reason"]) == ("ended", "unfocus")


async def test_an_archived_or_deleted_thread_ends_its_binding(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    await go(parley, fake_discord)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    archived, deleted = fake_discord.state.threads()
    await fake_discord.archive_thread(archived.id)
    await fake_discord.delete_thread(deleted.id)

    async def both_ended() -> bool:
        bindings = (await call(parley, "GET", "/bindings"))["items"]
        return {b["status"] for b in bindings} == {"ended"}

    assert await eventually(both_ended)
    reasons = {
        b["conversation"]["conversation_id"]: b["ended_reason"]
        for b in (await call(parley, "GET", "/bindings"))["items"]
    }
    assert reasons == {str(archived.id): "thread-archived", str(deleted.id): "thread-deleted"}


@pytest.mark.parametrize("spawn_threads", [False])
async def test_focus_keeps_the_privacy_rule(parley: Harness, fake_discord: FakeDiscord) -> None:
    """ada (an owner) cannot /focus a thread on bea's conversation: to her it does not exist.
    Her own conversation, yes, while only she writes there; bea writing there ends it."""
    bea = fake_discord.state.user("bea")
    async with parley.client(await parley.add_person("bea")) as as_bea:
        said = await as_bea.post("/api/v1/conversations/bob/messages", json={"text": "secret"})
    secret = f"topic:{said.json()['topic_id']}"
    await call(parley, "PUT", f"/channels/discord/accounts/bot/identities/{bea.id}", person="bea")
    thread = await fake_discord.user_starts_thread(fake_discord.channel.id, "ada", "talk")
    replies = fake_discord.state.replies

    await fake_discord.user_runs_command(thread.id, "ada", "focus", {"target": secret})
    await fake_discord.wait_until(lambda: len(replies) == 1)
    assert f"no open session {secret}" in replies[0].data["content"]
    assert (await call(parley, "GET", "/bindings"))["items"] == []

    await fake_discord.user_runs_command(thread.id, "ada", "focus", {"target": "manager"})
    await fake_discord.wait_until(lambda: len(replies) == 2)
    assert "Bound here to topic:" in replies[1].data["content"]
    await fake_discord.user_says(thread.id, "bea", "what did ada say?")

    async def ended() -> bool:
        (binding,) = (await call(parley, "GET", "/bindings"))["items"]
        return (binding["status"], binding["ended_reason"]) == ("ended", "privacy")

    assert await eventually(ended)
    await fake_discord.wait_until(lambda: len(fake_discord.state.texts(thread.id)) == 2)
    notice = fake_discord.state.texts(thread.id)[1]
    assert notice.startswith("This conversation is no longer bound to a session: bea writes")
    shown = await call(parley, "GET", "/conversations/manager")
    assert "what did ada say?" not in [m["body"] for m in shown["messages"]["items"]]


@pytest.mark.parametrize("spawn_threads", [False])
async def test_who_focused_a_thread_is_known_there(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    """ada (the owner) focused a thread and unfocused it, without writing there: she is still in
    it, so bea may not bind it to bea's own conversation, which ada may not read."""
    thread, replies = await a_thread_ada_focused(parley, fake_discord)
    await fake_discord.user_runs_command(thread.id, "ada", "unfocus")
    await fake_discord.wait_until(lambda: len(replies) == 2)

    await fake_discord.user_runs_command(thread.id, "bea", "focus", {"target": "manager"})
    await fake_discord.wait_until(lambda: len(replies) == 3)
    refused = replies[2].data["content"]
    assert "to owner, who may not read it" in refused, refused  # ada is the owner
    bindings = (await call(parley, "GET", "/bindings"))["items"]
    assert [b["status"] for b in bindings] == ["ended"]
