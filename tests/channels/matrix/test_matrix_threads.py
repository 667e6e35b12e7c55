"""Subtasks spawned with a thread from a Matrix room, against the fake homeserver through
mautrix, Parley in process (SQLite and PostgreSQL): with
``channels.matrix.thread_bindings.spawn_subagent_sessions`` on, each gets a thread (``m.thread``)
under the requester's room, rooted at an intro, bound to its session, and its completion goes
to that thread only, once; off (the default), a Matrix user sees what they saw without
bindings. ``!focus`` binds by hand, ``!unfocus`` unbinds, only who bound it may."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from parley.settings import Settings
from tests.channels.matrix.fake_matrix import FakeMatrix
from tests.channels.matrix.on_matrix import link, on_matrix, parley_on, set_up_account
from tests.channels.test_bound_completions import MANAGER, answer_both, deliveries_of, settled
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def spawn_threads() -> bool:
    return True


@pytest.fixture
def settings(settings: Settings, spawn_threads: bool, fake_matrix: FakeMatrix) -> Settings:
    return on_matrix(settings, spawn_threads, fake_matrix)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_matrix: FakeMatrix, tmp_path: Path
) -> AsyncIterator[Harness]:
    async def setup(harness: Harness) -> None:
        await harness.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await harness.hire("ann", human="owner")
        await harness.hire("bob", human="owner")
        await set_up_account(harness, fake_matrix, "manager")

    async with parley_on(settings, clock, fake_matrix, setup) as harness:
        yield harness


async def go(parley: Harness, fake: FakeMatrix) -> list[dict[str, Any]]:
    """ada says 'go' in the room: the manager spawns two subtasks asked with a thread; their
    workers' waiting turns."""
    await fake.user_says(fake.room.room_id, "ada", "go")

    async def both_waiting() -> bool:
        return len((await call(parley, "GET", "/me/turns"))["items"]) == 2

    assert await eventually(both_waiting)
    turns: list[dict[str, Any]] = (await call(parley, "GET", "/me/turns"))["items"]
    return turns


def completions(fake: FakeMatrix, thread: str | None) -> list[str]:
    return [t for t in fake.texts(fake.room.room_id, thread) if t.startswith("subtask")]


async def test_two_bound_sessions_each_deliver_to_their_own_thread_once(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    turns = await go(parley, fake_matrix)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    general = fake_matrix.room.room_id
    intros = fake_matrix.sent(general)
    assert sorted(e["content"]["body"].split(":")[0] for e in intros) == ["ann", "bob"]
    bindings = (await call(parley, "GET", "/bindings"))["items"]
    roots = {e["event_id"] for e in intros}
    assert {b["conversation"]["conversation_id"] for b in bindings} == roots
    assert {b["conversation"]["parent_conversation_id"] for b in bindings} == {general}

    await answer_both(parley, turns)  # both finish together
    assert await eventually(lambda: settled(parley, "channel_post", 2))
    for binding in bindings:
        root = binding["conversation"]["conversation_id"]
        task = binding["session"].removeprefix("topic:")
        (posted,) = [e for e in fake_matrix.sent(general) if e["event_id"] not in roots
                     and e["content"]["m.relates_to"]["event_id"] == root]  # fmt: skip
        assert posted["content"]["body"].startswith(f"subtask {task} (")
        assert posted["content"]["m.relates_to"]["rel_type"] == "m.thread"
        persona = posted["content"]["com.beeper.per_message_profile"]["displayname"]
        assert persona in ("ann", "bob")
    assert completions(fake_matrix, None) == []  # nothing in the main timeline
    assert len(fake_matrix.sent(general)) == 4  # two intros, two completions
    found = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in found} == {("bound", "requester-thread")}


@pytest.mark.parametrize("spawn_threads", [False])
async def test_with_the_spawn_setting_off_a_matrix_user_sees_no_change(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    turns = await go(parley, fake_matrix)
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert fake_matrix.sent(fake_matrix.room.room_id) == []
    assert await deliveries_of(parley, "channel_thread") == []
    assert (await call(parley, "GET", "/bindings"))["items"] == []
    found = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in found} == {("fallback", "no-active-binding")}


def notices(fake: FakeMatrix) -> list[dict[str, Any]]:
    return [e for e in fake.sent(fake.room.room_id) if e["content"]["msgtype"] == "m.notice"]


async def focused_thread(parley: Harness, fake: FakeMatrix, target: str) -> str:
    """A thread ada started and focused on ``target``: its root."""
    room = fake.room.room_id
    root = await fake.user_says(room, "ada", "!focus " + target)  # a root may be a command
    await fake.wait_until(lambda: len(notices(fake)) == 1)
    await fake.user_says(room, "ada", "!unfocus")
    await fake.wait_until(lambda: len(notices(fake)) == 2)
    thread_root = await fake.user_says(room, "ada", "a thread")
    await fake.user_says(room, "ada", f"!focus {target}", thread=thread_root)
    await fake.wait_until(lambda: len(notices(fake)) == 3)
    assert root
    return thread_root


@pytest.mark.parametrize("spawn_threads", [False])
async def test_focus_binds_and_text_goes_to_the_bound_session_and_only_who_bound_unfocuses(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    turns = await go(parley, fake_matrix)
    first = turns[0]["run"]
    target = f"topic:{first['topic_id']}"
    root = await focused_thread(parley, fake_matrix, target)
    bound, unbound, answer = notices(fake_matrix)
    assert "Bound here to topic:" in bound["content"]["body"]
    assert "!unfocus ends it" in bound["content"]["body"]
    assert unbound["content"]["body"].startswith("Unbound from ")
    assert target in answer["content"]["body"]
    relation = answer["content"]["m.relates_to"]
    assert (relation["rel_type"], relation["event_id"]) == ("m.thread", root)
    (binding,) = [b for b in (await call(parley, "GET", "/bindings"))["items"]
                  if b["status"] == "active"]  # fmt: skip
    assert binding["conversation"] == {
        "channel": "matrix", "account_id": fake_matrix.user("parley"),
        "conversation_id": root, "parent_conversation_id": fake_matrix.room.room_id,
    }  # fmt: skip
    assert binding["bound_by"] == f"matrix:{fake_matrix.user('ada')}"

    await call(parley, "POST", "/people", name="bea")
    await link(parley, fake_matrix, "bea", "bea")
    await fake_matrix.user_says(fake_matrix.room.room_id, "bea", "!unfocus", thread=root)
    await fake_matrix.wait_until(lambda: len(notices(fake_matrix)) == 4)
    assert "only who bound it" in notices(fake_matrix)[3]["content"]["body"]
    await fake_matrix.user_says(fake_matrix.room.room_id, "ada", "!unfocus", thread=root)
    await fake_matrix.wait_until(lambda: len(notices(fake_matrix)) == 5)
    states = {b["ended_reason"] for b in (await call(parley, "GET", "/bindings"))["items"]}
    assert states == {"unfocus"}


@pytest.mark.parametrize("spawn_threads", [False])
async def test_a_focused_thread_s_text_goes_to_its_session(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    turns = await go(parley, fake_matrix)
    first = turns[0]["run"]
    root = await focused_thread(parley, fake_matrix, f"topic:{first['topic_id']}")
    await fake_matrix.user_says(fake_matrix.room.room_id, "ada", "for the subtask", thread=root)

    async def queued_to_the_subtask() -> bool:
        said = await call(parley, "GET", f"/topics/{first['topic_id']}/messages")
        return "for the subtask" in str(said)

    assert await eventually(queued_to_the_subtask)


@pytest.mark.parametrize("spawn_threads", [False])
async def test_a_focused_thread_gets_its_session_s_completion_only(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    turns = await go(parley, fake_matrix)
    first, second = (turn["run"] for turn in turns)
    root = await focused_thread(parley, fake_matrix, f"topic:{first['topic_id']}")
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "channel_post", 1))
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    assert completions(fake_matrix, root) == [
        f"subtask {first['topic_id']} ({first['agent']}) done: done"
    ]
    assert completions(fake_matrix, None) == []  # nothing in the room itself
    routes = {
        (c["key"].split(":")[1], c["mode"], c["reason"])
        for c in await deliveries_of(parley, "task_completion")
    }
    assert routes == {
        (str(first["topic_id"]), "bound", "requester-thread"),
        (str(second["topic_id"]), "fallback", "no-active-binding"),
    }
