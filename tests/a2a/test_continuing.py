"""A client's text naming a task still open continues that task (A2A 1.0 §3.4.3): the same
task comes back, its history grows by the text and, once its next turn ends, that turn's
reply; it is still one task. A text naming a task that ended is refused; a cancel stops each of
its turns; a push config is told each turn's state and the end once. On both stores, through
a2a-sdk's own client over real HTTP; each turn of the agent waits for the test to let it end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from a2a.client.errors import A2AClientError
from a2a.helpers import get_artifact_text
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import UnsupportedOperationError

from tests.a2a.support import Gated, home, texts_of
from tests.a2a.test_perimeter import post, rpc, send_params
from tests.a2a.test_pushes import listener
from tests.support import eventually

WORKING = TaskState.TASK_STATE_WORKING
COMPLETED = TaskState.TASK_STATE_COMPLETED


async def test_a_text_naming_a_working_task_continues_it_to_its_end(gated: Gated) -> None:
    first = await gated.send("first")
    assert await gated.started(1)
    again = await gated.send("second", task_id=first.id)
    assert again.id == first.id and again.status.state == WORKING
    assert texts_of(await gated.get(first.id)) == ["first", "second"]
    async with gated.served.client("gated", gated.token) as client:
        listed = await client.list_tasks(ListTasksRequest())
    assert [task.id for task in listed.tasks] == [first.id] and listed.total_size == 1
    # A blocking send (a third text) returns only once the task has truly ended.
    waiting = asyncio.create_task(gated.send("third", task_id=first.id, wait=True))

    async def taken() -> bool:
        return texts_of(await gated.get(first.id)) == ["first", "second", "third"]

    assert await eventually(taken, within=30)  # joins the second turn, still waiting
    gated.let_end(1)
    assert await gated.started(2)
    assert (await gated.get(first.id)).status.state == WORKING
    assert not waiting.done()
    gated.let_end(2)
    ended = await asyncio.wait_for(waiting, 30)
    assert ended.id == first.id and ended.status.state == COMPLETED
    got = await gated.get(first.id)
    assert texts_of(got) == ["first", "reply 1", "second", "third", "reply 2"]
    assert [get_artifact_text(a).strip() for a in got.artifacts] == ["reply 1", "reply 2"]
    assert texts_of(await gated.get(first.id, history_length=2)) == ["third", "reply 2"]
    assert [run["state"] for run in gated.runs()] == ["finished", "finished"]


async def test_a_stream_follows_the_task_into_its_next_turn(gated: Gated) -> None:
    first = await gated.send("first")
    assert await gated.started(1)
    await gated.send("second", task_id=first.id)
    async with gated.served.client("gated", gated.token, streaming=True) as streaming:

        async def followed() -> list[Any]:
            subscribe = SubscribeToTaskRequest(id=first.id)
            return [event async for event in streaming.subscribe(subscribe)]

        following = asyncio.create_task(followed())
        gated.let_end(1)
        assert await gated.started(2)
        gated.let_end(2)
        events = await asyncio.wait_for(following, 30)
    statuses = [e.status_update.status for e in events if e.HasField("status_update")]
    said = [status.message.parts[0].text for status in statuses if status.message.parts]
    assert "the task goes on in its next turn" in said
    assert statuses[-1].state == COMPLETED
    assert [s.state for s in statuses].count(COMPLETED) == 1


async def test_a_text_naming_an_ended_task_is_refused(gated: Gated) -> None:
    first = await gated.send("first")
    assert await gated.started(1)
    gated.let_end(1)

    async def completed() -> bool:
        return (await gated.get(first.id)).status.state == COMPLETED

    assert await eventually(completed, within=30)
    with pytest.raises((UnsupportedOperationError, A2AClientError)) as refused:
        await gated.send("more", task_id=first.id)
    assert "is over" in str(refused.value)
    assert texts_of(await gated.get(first.id)) == ["first", "reply 1"]
    assert len(gated.runs()) == 1


async def test_a_cancel_stops_every_turn_of_the_task(gated: Gated) -> None:
    first = await gated.send("first")
    assert await gated.started(1)
    await gated.send("second", task_id=first.id)
    async with gated.served.client("gated", gated.token) as client:
        cancelled = await client.cancel_task(CancelTaskRequest(id=first.id))
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert [run["state"] for run in gated.runs()] == ["stopped", "stopped"]
    assert not (gated.workspace / "turn-2").exists()


async def test_a_push_config_is_told_each_turn_and_the_end_once(
    tmp_path: Path, sqlite_template: Path, database_url: str
) -> None:
    with (
        listener() as (url, told),
        home(tmp_path, sqlite_template, database_url, a2a_push_allowed_hosts="127.0.0.1") as served,
    ):
        gated = Gated(served)
        config = {"url": url, "token": "client-secret"}
        body = {
            **send_params("first"),
            "configuration": {"returnImmediately": True, "taskPushNotificationConfig": config},
        }
        sent = post(served, "gated", gated.token, rpc("SendMessage", body))
        task_id = sent.json()["result"]["task"]["id"]

        def heard(state: str, texts: int) -> Any:
            async def check() -> bool:
                return any(
                    n["body"]["task"]["status"]["state"] == state
                    and len(n["body"]["task"].get("history", [])) == texts
                    for n in told
                )

            return check

        assert await gated.started(1)
        assert await eventually(heard("TASK_STATE_WORKING", 1), within=30), told
        await gated.send("second", task_id=task_id)
        gated.let_end(1)
        assert await gated.started(2)
        # first, reply 1, second: the task goes on in its second turn, and is told so
        assert await eventually(heard("TASK_STATE_WORKING", 3), within=30), told
        gated.let_end(2)
        assert await eventually(heard("TASK_STATE_COMPLETED", 4), within=30), told
    states = [n["body"]["task"]["status"]["state"] for n in told]
    assert states.count("TASK_STATE_COMPLETED") == 1 and states[-1] == "TASK_STATE_COMPLETED"
    keys = [n["headers"]["x-a2a-notification-id"] for n in told]
    assert len(keys) == len(set(keys))  # each state of each turn once
    assert {n["body"]["task"]["id"] for n in told} == {task_id}
