"""Subtasks spawned with a thread, through the web channel (the API, in process, on SQLite and
PostgreSQL), with the spawn setting off (its default): nothing changes from the unbound path.
The same work with it on: ``test_spawned_threads.py``. Shared here: the work itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parley.settings import ChannelSettings, ChannelsSettings, Settings, ThreadBindingSettings
from tests.runs.support import script
from tests.support import Harness, call, eventually

MANAGER = """
    rules:
      - when: {text: "^go$"}
        do:
          - spawn: {agent: ann, text: "first part", thread: true}
          - spawn: {agent: bob, text: "second part", thread: true}
    otherwise: []
"""


def spawning_threads(settings: Settings) -> Settings:
    bindings = ThreadBindingSettings(spawn_subagent_sessions=True)
    web = ChannelSettings(thread_bindings=bindings)
    return settings.model_copy(update={"channels": ChannelsSettings(web=web)})


async def start_work(parley: Harness, tmp_path: Path) -> tuple[int, list[dict[str, Any]]]:
    """A manager, two human workers (answered by the owner), a web account whose default agent
    is the manager, and 'go' written in a web conversation: the manager spawns two subtasks,
    each asked with a thread. The web conversation's id and the two workers' waiting turns."""
    await parley.hire("manager", brain=script(tmp_path, "manager", MANAGER))
    await parley.hire("ann", human="owner")
    await parley.hire("bob", human="owner")
    await call(parley, "PUT", "/channels/web/accounts/home", default_agent="manager")
    main = (await call(parley, "POST", "/channels/web/home/conversations", title="plans"))["id"]
    await call(parley, "POST", f"/channels/web/home/conversations/{main}/messages", text="go")

    async def both_waiting() -> bool:
        return len((await call(parley, "GET", "/me/turns"))["items"]) == 2

    assert await eventually(both_waiting)
    turns = (await call(parley, "GET", "/me/turns"))["items"]
    return main, turns


async def deliveries_of(parley: Harness, kind: str) -> list[dict[str, Any]]:
    items = (await call(parley, "GET", "/deliveries"))["items"]
    return [item for item in items if item["kind"] == kind]


async def settled(parley: Harness, kind: str, count: int) -> bool:
    found = await deliveries_of(parley, kind)
    return len(found) == count and all(item["state"] == "delivered" for item in found)


async def answer_both(parley: Harness, turns: list[dict[str, Any]]) -> None:
    for turn in turns:  # one after the other, before either's completion is delivered
        await call(parley, "POST", f"/runs/{turn['run']['id']}/answer", text="done", complete=True)


async def test_with_the_spawn_setting_off_nothing_changes(parley: Harness, tmp_path: Path) -> None:
    main, turns = await start_work(parley, tmp_path)
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    # the completions reached the manager's session, as before; no thread, no binding, no post
    assert await deliveries_of(parley, "channel_thread") == []
    assert await deliveries_of(parley, "channel_post") == []
    assert (await call(parley, "GET", "/bindings"))["items"] == []
    shown = await call(parley, "GET", f"/channels/web/home/conversations/{main}")
    assert shown["threads"] == []
    assert [m["body"] for m in shown["messages"]] == ["go"]
    conversation = await call(parley, "GET", "/conversations/manager")
    texts = [m["body"] for m in conversation["messages"]["items"] if m["kind"] == "text"]
    assert sum(text.startswith("subtask") for text in texts) == 2
    completions = await deliveries_of(parley, "task_completion")
    assert {(c["mode"], c["reason"]) for c in completions} == {("fallback", "no-active-binding")}


async def test_a_bound_session_s_completion_resolves_only_to_its_thread(
    parley: Harness, tmp_path: Path
) -> None:
    """The spawn setting off, an owner binds one subtask's session to a thread by hand."""
    main, turns = await start_work(parley, tmp_path)
    thread = await call(
        parley, "POST", f"/channels/web/home/conversations/{main}/threads", title="ann's part"
    )
    first = turns[0]["run"]
    await call(
        parley, "POST", "/bindings", session=f"topic:{first['topic_id']}", channel="web",
        account_id="home", conversation_id=str(thread["id"]),
        parent_conversation_id=str(main),
    )  # fmt: skip
    await answer_both(parley, turns)
    assert await eventually(lambda: settled(parley, "channel_post", 1))
    assert await eventually(lambda: settled(parley, "task_completion", 2))
    shown = await call(parley, "GET", f"/channels/web/home/conversations/{thread['id']}")
    assert [m["body"] for m in shown["messages"]] == [
        f"subtask {first['topic_id']} ({first['agent']}) done: done"
    ]
    shown = await call(parley, "GET", f"/channels/web/home/conversations/{main}")
    assert [m["body"] for m in shown["messages"]] == ["go"]
    routes = {
        (c["key"].split(":")[1], c["mode"], c["reason"])
        for c in await deliveries_of(parley, "task_completion")
    }
    second = turns[1]["run"]["topic_id"]
    assert routes == {
        (str(first["topic_id"]), "bound", "requester-thread"),
        (str(second), "fallback", "no-active-binding"),
    }
