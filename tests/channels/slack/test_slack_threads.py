"""Subtasks spawned with a thread from a Slack channel, against the fake Slack through
slack_sdk, Parley in process (SQLite and PostgreSQL): with
``channels.slack.thread_bindings.spawn_subagent_sessions`` on, each gets a thread under an intro
in the requester's channel, bound to its session, and its completion goes to that thread only,
under the agent's name, once; off (the default), a Slack user sees what they saw without
bindings. /focus binds a channel by hand; only who bound it may /unfocus; a bound thread whose
intro was deleted ends its binding at the next post."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from parley.settings import Settings
from tests.channels.slack.fake_slack import GENERAL, PEOPLE, FakeSlack
from tests.channels.slack.on_slack import on_slack, parley_on, set_up_account
from tests.channels.test_bound_completions import MANAGER, answer_both, deliveries_of, settled
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def spawn_threads() -> bool:
    return True


@pytest.fixture
def settings(settings: Settings, spawn_threads: bool, fake_slack: FakeSlack) -> Settings:
    return on_slack(settings, spawn_threads, fake_slack)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_slack: FakeSlack, tmp_path: Path
) -> AsyncIterator[Harness]:
    async def setup(harness: Harness) -> None:
        await harness.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await harness.hire("ann", human="owner")
        await harness.hire("bob", human="owner")
        await set_up_account(harness, fake_slack, "manager")

    async with parley_on(settings, clock, fake_slack, setup) as harness:
        yield harness


async def go(parley: Harness, fake: FakeSlack) -> list[dict[str, Any]]:
    """ada says 'go' in #general: the manager spawns two subtasks asked with a thread; their
    workers' waiting turns."""
    await fake.user_says("ada", "go")

    async def both_waiting() -> bool:
        return len((await call(parley, "GET", "/me/turns"))["items"]) == 2

    assert await eventually(both_waiting)
    turns: list[dict[str, Any]] = (await call(parley, "GET", "/me/turns"))["items"]
    return turns


def completion_texts(fake: FakeSlack, thread_ts: str | None = None) -> list[str]:
    return [t for t in fake.texts(GENERAL, thread_ts) if t.startswith("subtask")]


async def answer(fake: FakeSlack, envelope: str) -> str:
    await fake.wait_until(lambda: envelope in fake.acks)
    payload = fake.acks[envelope]
    assert payload is not None and payload["response_type"] == "ephemeral"
    return str(payload["text"])


async def test_two_bound_sessions_each_deliver_to_their_own_thread_once(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    turns = await go(parley, fake_slack)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    intros = fake_slack.posts()
    assert sorted(p.text.split(":")[0] for p in intros) == sorted(
        str(turn["run"]["agent"]) for turn in turns
    )
    bindings = (await call(parley, "GET", "/bindings"))["items"]
    assert {b["conversation"]["conversation_id"] for b in bindings} == {
        f"{GENERAL}/{p.ts}" for p in intros
    }
    assert {b["conversation"]["parent_conversation_id"] for b in bindings} == {GENERAL}

    await answer_both(parley, turns)  # both finish together
    assert await eventually(lambda: settled(parley, "channel_post", 2))
    for binding in bindings:
        thread_ts = binding["conversation"]["conversation_id"].split("/")[1]
        task = binding["session"].removeprefix("topic:")
        (posted,) = fake_slack.posts(GENERAL, thread_ts)
        assert posted.text.startswith(f"subtask {task} (")
        assert posted.username in ("ann", "bob")
    # the main channel has what ada said and the threads' intros; no completion
    assert completion_texts(fake_slack) == []
    assert len(fake_slack.posts()) == 2
    completions = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in completions} == {("bound", "requester-thread")}


@pytest.mark.parametrize("spawn_threads", [False])
async def test_with_the_spawn_setting_off_a_slack_user_sees_no_change(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    turns = await go(parley, fake_slack)
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert fake_slack.posts() == []
    assert await deliveries_of(parley, "channel_thread") == []
    assert (await call(parley, "GET", "/bindings"))["items"] == []
    completions = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in completions} == {("fallback", "no-active-binding")}


@pytest.mark.parametrize("spawn_threads", [False])
async def test_focus_binds_the_channel_and_its_text_goes_to_the_bound_session(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    turns = await go(parley, fake_slack)
    first, second = (turn["run"] for turn in turns)
    target = f"topic:{first['topic_id']}"
    said = await answer(fake_slack, await fake_slack.run_command("ada", "/focus", target))
    assert target in said and "Bound here" in said
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["conversation"]["conversation_id"] == GENERAL

    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "channel_post", 1))
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert completion_texts(fake_slack) == [
        f"subtask {first['topic_id']} ({first['agent']}) done: done"
    ]
    routes = {
        (c["key"].split(":")[1], c["mode"], c["reason"])
        for c in await deliveries_of(parley, "task_completion")
    }
    assert routes == {
        (str(first["topic_id"]), "bound", "exact-conversation"),
        (str(second["topic_id"]), "fallback", "no-active-binding"),
    }


@pytest.mark.parametrize("spawn_threads", [False])
async def test_only_who_focused_may_unfocus(parley: Harness, fake_slack: FakeSlack) -> None:
    await call(parley, "POST", "/people", name="bea")
    account = "/channels/slack/accounts/app"
    await call(parley, "PUT", f"{account}/identities/{PEOPLE['bea']}", person="bea")
    said = await answer(fake_slack, await fake_slack.run_command("ada", "/focus", "manager"))
    assert "Bound here to topic:" in said

    refused = await answer(fake_slack, await fake_slack.run_command("bea", "/unfocus"))
    assert "only who bound it" in refused
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["status"] == "active" and binding["bound_by"] == f"slack:{PEOPLE['ada']}"

    done = await answer(fake_slack, await fake_slack.run_command("ada", "/unfocus"))
    assert done.startswith("Unbound from topic:")
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert (binding["status"], binding["ended_reason"]) == ("ended", "unfocus")
    nothing = await answer(fake_slack, await fake_slack.run_command("ada", "/unfocus"))
    assert nothing == "nothing is bound here"


@pytest.mark.parametrize("spawn_threads", [False])
async def test_commands_of_strangers_and_unknown_commands_are_refused(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    stranger = await answer(fake_slack, await fake_slack.run_command("stranger", "/focus", "x"))
    assert "Parley does not know you" in stranger
    empty = await answer(fake_slack, await fake_slack.run_command("ada", "/focus", "  "))
    assert empty.startswith("usage: /focus")
    other = await answer(fake_slack, await fake_slack.run_command("ada", "/deploy", "prod"))
    assert "no command '/deploy'" in other
    assert (await call(parley, "GET", "/bindings"))["items"] == []


async def test_a_deleted_thread_ends_its_binding(parley: Harness, fake_slack: FakeSlack) -> None:
    turns = await go(parley, fake_slack)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    gone, kept = fake_slack.posts()
    fake_slack.delete_message(GENERAL, gone.ts)
    await answer_both(parley, turns)

    async def one_ended() -> bool:
        bindings = (await call(parley, "GET", "/bindings"))["items"]
        return sorted(b["status"] for b in bindings) == ["active", "ended"]

    assert await eventually(one_ended)
    for binding in (await call(parley, "GET", "/bindings"))["items"]:
        thread = binding["conversation"]["conversation_id"]
        if thread == f"{GENERAL}/{gone.ts}":
            assert binding["ended_reason"] == "thread-deleted"
    await fake_slack.wait_until(lambda: len(completion_texts(fake_slack, kept.ts)) == 1)


@pytest.mark.parametrize("spawn_threads", [False])
async def test_a_thread_focused_by_hand_gets_its_session_s_completion_only(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    turns = await go(parley, fake_slack)
    first, second = (turn["run"] for turn in turns)
    top = await fake_slack.user_says("ada", "about the first part")
    await fake_slack.user_says("ada", f"!focus topic:{first['topic_id']}", thread_ts=top)
    await fake_slack.wait_until(lambda: len(fake_slack.ephemerals) == 1)
    assert "Bound here" in fake_slack.ephemerals[0].text

    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "channel_post", 1))
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert completion_texts(fake_slack, top) == [
        f"subtask {first['topic_id']} ({first['agent']}) done: done"
    ]
    assert completion_texts(fake_slack) == []  # nothing in the channel itself
    routes = {
        (c["key"].split(":")[1], c["mode"], c["reason"])
        for c in await deliveries_of(parley, "task_completion")
    }
    assert routes == {
        (str(first["topic_id"]), "bound", "requester-thread"),
        (str(second["topic_id"]), "fallback", "no-active-binding"),
    }
