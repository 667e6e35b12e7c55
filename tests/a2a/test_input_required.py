"""A turn that waits for a person's approval is INPUT_REQUIRED to the A2A client whose context it
answers, and the client's next message with the task's id decides it, as the owner who let the
client in (recorded with the client's name). The model is a local fake of the OpenAI API; the
client is a2a-sdk's own, over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from a2a.client.errors import A2AClientError
from a2a.helpers import get_artifact_text
from a2a.types.a2a_pb2 import GetTaskRequest, ListTasksRequest, Role, Task, TaskState
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError
from pydantic import SecretStr

from tests.a2a.support import A2AHome, home, request
from tests.a2a.test_perimeter import post, rpc, send_params
from tests.a2a.test_pushes import listener
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.support import eventually

WRITE = ToolCall("run", {"command": "echo hi > made.txt"})
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED


@contextmanager
def _builder(
    tmp_path: Path, sqlite_template: Path, **settings: Any
) -> Iterator[tuple[A2AHome, Path]]:
    """An exposed agent whose model calls ``run`` (which asks first), then says "Done."; and its
    workspace."""
    script = Script(replies=[Reply(calls=(WRITE,)), Reply(text="Done.")])
    with (
        serving(openai_app(script)) as url,
        home(
            tmp_path,
            sqlite_template,
            openai_base_url=url + "/v1",
            openai_api_key=SecretStr("k"),
            **settings,
        ) as served,
        served.owner() as owner,
    ):
        hired = owner.post(
            "/agents",
            json={"name": "builder", "node": "local", "brain": "openai:model-test",
                  "tools": ["run"], "ask": ["run"]},
        )  # fmt: skip
        assert hired.status_code == 201, hired.text
        assert owner.post("/a2a/agents", json={"agent": "builder"}).status_code == 201
        yield served, Path(hired.json()["workspace"])


@pytest.fixture
def builder(tmp_path: Path, sqlite_template: Path) -> Iterator[tuple[A2AHome, Path]]:
    with _builder(tmp_path, sqlite_template) as built:
        yield built


async def _sent(served: A2AHome, token: str, text: str, task_id: str = "") -> Task:
    async with served.client("builder", token) as client:
        answers = [answer async for answer in client.send_message(request(text, task_id=task_id))]
    return answers[-1].task


async def test_a_call_waiting_for_approval_is_input_required_and_yes_lets_it_act(
    builder: tuple[A2AHome, Path],
) -> None:
    served, workspace = builder
    token = served.client_token("planner")
    asked = await _sent(served, token, "make a file")
    async with served.client("builder", token) as client:
        read = await client.get_task(GetTaskRequest(id=asked.id))
        listed = await client.list_tasks(ListTasksRequest())
        by_state = {
            state: await client.list_tasks(ListTasksRequest(status=state))
            for state in (
                INPUT_REQUIRED,
                TaskState.TASK_STATE_WORKING,
                TaskState.TASK_STATE_REJECTED,
            )
        }
    done = await _sent(served, token, "yes", task_id=asked.id)
    approval_id = asked.status.message.message_id.removeprefix("asking-")
    with served.owner() as owner:
        approval = owner.get(f"/approvals/{approval_id}").json()
    assert asked.status.state == INPUT_REQUIRED
    question = asked.status.message.parts[0].text
    assert "builder asks to call run with" in question and "echo hi > made.txt" in question
    assert "'yes'" in question and "'no'" in question
    assert read.status.state == INPUT_REQUIRED and listed.tasks[0].status.state == INPUT_REQUIRED
    assert [task.id for task in by_state[INPUT_REQUIRED].tasks] == [asked.id]
    assert by_state[INPUT_REQUIRED].total_size == 1
    assert not by_state[TaskState.TASK_STATE_WORKING].tasks  # waiting for input is not working
    assert not by_state[TaskState.TASK_STATE_REJECTED].tasks  # a state no Parley task takes
    assert done.id == asked.id and done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(done.artifacts[0]) == "Done."
    assert (workspace / "made.txt").read_text().strip() == "hi"
    assert (
        approval["tool"] == "run"
        and approval["state"] == "approved"
        and approval["decided_by"] == "owner"
    )
    assert approval["reason"] == "answered by A2A client planner"


async def test_no_and_why_denies_it_over_a_stream_which_ends_at_the_question(
    builder: tuple[A2AHome, Path],
) -> None:
    served, workspace = builder
    token = served.client_token("planner")
    async with served.client("builder", token, streaming=True) as client:
        first = [event async for event in client.send_message(request("make a file"))]
        asked = first[-1].status_update
        answered = [
            event
            async for event in client.send_message(
                request("No: not in my workspace", task_id=asked.task_id)
            )
        ]
    assert asked.status.state == INPUT_REQUIRED
    states = [e.status_update.status.state for e in answered if e.HasField("status_update")]
    said = [
        e.status_update.status.message.parts[0].text
        for e in answered
        if e.HasField("status_update") and e.status_update.status.message.parts
    ]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED and INPUT_REQUIRED not in states
    assert any(
        "run: denied by owner (answered by A2A client planner: not in my workspace)" in s
        for s in said
    )
    assert not (workspace / "made.txt").exists()


async def test_an_answer_that_is_neither_yes_nor_no_decides_nothing(
    builder: tuple[A2AHome, Path],
) -> None:
    served, workspace = builder
    token = served.client_token("planner")
    asked = await _sent(served, token, "make a file")
    with pytest.raises((InvalidParamsError, A2AClientError)) as refused:
        await _sent(served, token, "maybe later", task_id=asked.id)
    async with served.client("builder", token) as client:
        still = await client.get_task(GetTaskRequest(id=asked.id))
    assert "send 'yes', or 'no' and why" in str(refused.value)
    assert still.status.state == INPUT_REQUIRED
    assert not (workspace / "made.txt").exists()


async def test_an_answer_sent_again_is_its_task_not_a_new_text(
    builder: tuple[A2AHome, Path],
) -> None:
    served, _ = builder
    token = served.client_token("planner")
    asked = await _sent(served, token, "make a file")
    yes = request("yes", task_id=asked.id)
    other = request("no", task_id=asked.id)
    other.message.message_id = yes.message.message_id
    async with served.client("builder", token) as client:
        done = [answer async for answer in client.send_message(yes)][-1].task
        again = [answer async for answer in client.send_message(yes)][-1].task
        with pytest.raises((InvalidParamsError, A2AClientError)) as refused:
            [answer async for answer in client.send_message(other)]
    assert done.id == again.id == asked.id
    assert again.status.state == TaskState.TASK_STATE_COMPLETED
    assert "was sent before with other text" in str(refused.value)
    said = [m.parts[0].text for m in again.history if m.role == Role.ROLE_USER]
    assert said == ["make a file"]  # the answer decided the call; it is no text of the task
    with served.owner() as owner:
        assert len(owner.get("/runs", params={"agent": "builder"}).json()["items"]) == 1


async def test_another_clients_yes_finds_no_task(builder: tuple[A2AHome, Path]) -> None:
    served, workspace = builder
    asked = await _sent(served, served.client_token("planner"), "make a file")
    with pytest.raises((TaskNotFoundError, A2AClientError)) as refused:
        await _sent(served, served.client_token("intruder"), "yes", task_id=asked.id)
    assert "no task" in str(refused.value)
    assert not (workspace / "made.txt").exists()


async def test_a_push_config_is_told_the_question_once_then_the_end(
    tmp_path: Path, sqlite_template: Path
) -> None:
    with (
        listener() as (url, told),
        _builder(tmp_path, sqlite_template, a2a_push_allowed_hosts="127.0.0.1") as (served, _),
    ):
        token = served.client_token("planner")
        config = {"url": url, "token": "client-secret"}
        body = {
            **send_params("make a file"),
            "configuration": {"returnImmediately": True, "taskPushNotificationConfig": config},
        }
        sent = post(served, "builder", token, rpc("SendMessage", body))
        task_id = sent.json()["result"]["task"]["id"]

        def states() -> list[str]:
            return [n["body"]["task"]["status"]["state"] for n in told]

        async def asked() -> bool:
            return "TASK_STATE_INPUT_REQUIRED" in states()

        assert await eventually(asked, within=30), told
        await _sent(served, token, "yes", task_id=task_id)

        async def ended() -> bool:
            return "TASK_STATE_COMPLETED" in states()

        assert await eventually(ended, within=30), told
    question = next(
        n for n in told if n["body"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    )
    assert (
        "builder asks to call run"
        in question["body"]["task"]["status"]["message"]["parts"][0]["text"]
    )
    assert states().count("TASK_STATE_INPUT_REQUIRED") == 1
    assert len(states()) == len(set(states()))
