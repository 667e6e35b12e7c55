"""Subtasks spawned with a thread while the web channel's spawn setting is on (the API, in
process, on SQLite and PostgreSQL): two bound sessions under the same requester conversation,
finishing together, each deliver to their own thread only, exactly once, and nothing to the
main conversation; a completion with no binding left falls back, visibly."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.test_bound_completions import (
    answer_both,
    deliveries_of,
    settled,
    spawning_threads,
    start_work,
)
from tests.support import Harness, call, eventually


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return spawning_threads(settings)


async def test_two_bound_sessions_each_deliver_to_their_own_thread_once(
    parley: Harness, tmp_path: Path
) -> None:
    main, turns = await start_work(parley, tmp_path)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    bindings = (await call(parley, "GET", "/bindings"))["items"]
    assert sorted(b["target_kind"] for b in bindings) == ["subagent", "subagent"]
    assert {b["conversation"]["parent_conversation_id"] for b in bindings} == {str(main)}
    assert all(b["bound_by"].startswith("run:") for b in bindings)

    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "channel_post", 2))
    for binding in bindings:
        thread = binding["conversation"]["conversation_id"]
        shown = await call(parley, "GET", f"/channels/web/home/conversations/{thread}")
        task_id = binding["session"].removeprefix("topic:")
        assert [(m["author"], m["body"]) for m in shown["messages"]] == [
            (m["author"], f"subtask {task_id} ({m['author']}) done: done")
            for m in shown["messages"]
        ]
        assert len(shown["messages"]) == 1
    # nothing reached the main conversation but what the person wrote there
    shown = await call(parley, "GET", f"/channels/web/home/conversations/{main}")
    assert [(m["author"], m["body"]) for m in shown["messages"]] == [("person:owner", "go")]
    posts = await deliveries_of(parley, "channel_post")
    assert {(p["mode"], p["reason"]) for p in posts} == {("bound", "requester-thread")}
    completions = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in completions} == {("bound", "requester-thread")}


async def test_a_completion_after_unbinding_falls_back_visibly(
    parley: Harness, tmp_path: Path
) -> None:
    _, turns = await start_work(parley, tmp_path)
    assert await eventually(lambda: settled(parley, "channel_thread", 2))
    for binding in (await call(parley, "GET", "/bindings"))["items"]:
        await call(parley, "POST", "/bindings/unbind", binding=binding["id"], reason="enough")
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    completions = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in completions} == {("fallback", "no-active-binding")}
    assert await deliveries_of(parley, "channel_post") == []
