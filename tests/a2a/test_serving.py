"""A Parley agent answering a2a-sdk's own client over real HTTP: card, send, stream, get, list,
cancel mid-turn, contexts, both transports."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from a2a.helpers import get_artifact_text
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError

from tests.a2a.support import A2AHome, request
from tests.support import eventually

# Writes its pid, says a first part at once, then holds its turn until stopped.
SLOW_WITH_PID = """
import os, pathlib, time
pathlib.Path("pid").write_text(str(os.getpid()))
print("first part", flush=True)
time.sleep(120)
"""


async def test_a_message_sent_comes_back_completed_with_the_reply(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    async with a2a_home.client("scribe", token) as client:
        answers = [answer async for answer in client.send_message(request("hello there"))]
        task = answers[-1].task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert "I heard: hello there" in get_artifact_text(task.artifacts[0])
        got = await client.get_task(GetTaskRequest(id=task.id))
    assert got.context_id == task.context_id and got.status.state == task.status.state
    assert got.history[0].parts[0].text == "hello there"


def test_the_card_names_both_transports_at_version_1_and_a_bearer_scheme(
    a2a_home: A2AHome,
) -> None:
    a2a_home.hire("scribe")
    card = httpx.get(a2a_home.agent_url("scribe") + "/.well-known/agent-card.json").json()
    interfaces = {i["protocolBinding"]: i for i in card["supportedInterfaces"]}
    assert interfaces["JSONRPC"]["url"] == a2a_home.agent_url("scribe")
    assert interfaces["HTTP+JSON"]["url"] == a2a_home.agent_url("scribe") + "/rest"
    assert {i["protocolVersion"] for i in interfaces.values()} == {"1.0"}
    assert card["capabilities"]["streaming"] is True
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"


@pytest.mark.parametrize("rest", [False, True], ids=["jsonrpc", "http-json"])
async def test_a_context_is_one_conversation_whatever_the_transport(
    a2a_home: A2AHome, rest: bool
) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    async with a2a_home.client("scribe", token, rest=rest) as client:
        first = await _sent(client, request("one"))
        second = await _sent(client, request("two", context_id=first.context_id))
        other = await _sent(client, request("three"))
        in_first = await client.list_tasks(ListTasksRequest(context_id=first.context_id))
    assert second.context_id == first.context_id != other.context_id
    assert [t.id for t in in_first.tasks] == [second.id, first.id]
    with a2a_home.owner() as owner:
        runs = owner.get("/runs", params={"agent": "scribe"}).json()["items"]
    topics = {run["topic_id"] for run in runs}
    assert len(runs) == 3 and len(topics) == 2  # two contexts, two conversations


async def test_a_stream_carries_the_reply_as_it_is_written_then_the_end(
    a2a_home: A2AHome,
) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    async with a2a_home.client("scribe", token, streaming=True) as client:
        events = [event async for event in client.send_message(request("stream me"))]
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds[0] == "task" and kinds[-1] == "status_update"
    written = "".join(
        get_artifact_text(event.artifact_update.artifact)
        for event in events
        if event.HasField("artifact_update")
    )
    assert "I heard: stream me" in written
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_cancel_mid_turn_stops_the_turn_and_kills_its_process(
    a2a_home: A2AHome, tmp_path: Path
) -> None:
    program = tmp_path / "slow.py"
    program.write_text(SLOW_WITH_PID)
    a2a_home.hire("slow", f"command:{sys.executable} {program}")
    token = a2a_home.client_token("planner")
    async with a2a_home.client("slow", token) as client:
        task = await _sent(client, request("take your time", return_immediately=True))
        assert task.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
        pid_file = _workspace(a2a_home, "slow") / "pid"
        assert await eventually(lambda: _exists(pid_file), within=30)
        cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        assert "cancelled by A2A client planner" in cancelled.status.message.parts[0].text
        pid = int(pid_file.read_text())
        assert await eventually(lambda: _gone(pid), within=30)
        again = await client.get_task(GetTaskRequest(id=task.id))
        assert again.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task.id))
    with a2a_home.owner() as owner:
        [run] = owner.get("/runs", params={"agent": "slow"}).json()["items"]
    assert run["state"] == "stopped"


async def test_subscribing_to_a_running_task_streams_it_to_its_end(a2a_home: A2AHome) -> None:
    program = a2a_home.tmp / "slow.py"
    program.write_text(SLOW_WITH_PID)
    a2a_home.hire("slow", f"command:{sys.executable} {program}")
    token = a2a_home.client_token("planner")
    async with (
        a2a_home.client("slow", token) as client,
        a2a_home.client("slow", token, streaming=True) as streaming,
    ):
        task = await _sent(client, request("go", return_immediately=True))
        assert await eventually(lambda: _exists(_workspace(a2a_home, "slow") / "pid"), within=30)
        events = aiter(streaming.subscribe(SubscribeToTaskRequest(id=task.id)))
        # Cancelled only once the subscription has answered (its first event, the task as it
        # is), so that it follows a running task and not one already over.
        first = await asyncio.wait_for(anext(events), 30)
        await client.cancel_task(CancelTaskRequest(id=task.id))
        rest = await asyncio.wait_for(_kinds(events), 30)
    assert first.WhichOneof("payload") == "task" and rest and rest[-1] == "status_update"


async def _kinds(events: AsyncIterator[StreamResponse]) -> list[str]:
    return [str(event.WhichOneof("payload")) async for event in events]


async def _sent(client: object, sent: object) -> Task:
    answers = [answer async for answer in client.send_message(sent)]  # type: ignore[attr-defined]
    task: Task = answers[-1].task
    return task


def _workspace(home: A2AHome, agent: str) -> Path:
    with home.owner() as owner:
        return Path(owner.get(f"/agents/{agent}").json()["workspace"])


async def _exists(path: Path) -> bool:
    return path.exists()


async def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_list_filters_pages_and_counts_as_asked(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    async with a2a_home.client("scribe", token) as client:
        sent = [await _sent(client, request(f"text {n}")) for n in range(5)]
        first = await client.list_tasks(ListTasksRequest(page_size=2, history_length=0))
        second = await client.list_tasks(
            ListTasksRequest(page_size=2, page_token=first.next_page_token)
        )
        done = await client.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_COMPLETED))
        working = await client.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_WORKING))
        got = await client.get_task(GetTaskRequest(id=sent[0].id, history_length=0))
    newest_first = [task.id for task in reversed(sent)]
    assert [t.id for t in first.tasks] + [t.id for t in second.tasks] == newest_first[:4]
    assert (first.total_size, first.page_size) == (5, 2)
    assert all(len(task.history) == 0 for task in first.tasks) and len(got.history) == 0
    assert len(done.tasks) == 5 and done.total_size == 5
    assert working.tasks == [] and working.total_size == 0
