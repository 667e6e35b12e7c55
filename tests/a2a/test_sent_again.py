"""A message sent again — the client's connection cut before the answer, or Parley restarted
meanwhile, so that the client cannot know whether it arrived — is answered with the task it
made the first time (A2A 1.0 §3.3.1 lets a server use ``messageId`` so): the agent does not do
the work twice, and the task's history shows the client's text once, under the client's own
``messageId``. The same ``messageId`` for another text is another message, and refused. On both
stores, through a2a-sdk's own client over real HTTP."""

from __future__ import annotations

import asyncio

import pytest
from a2a.client.errors import A2AClientError
from a2a.types.a2a_pb2 import ListTasksRequest, SendMessageRequest, Task, TaskState
from a2a.utils.errors import InvalidParamsError

from parley.a2a.edge import INVALID_PARAMS
from tests.a2a.support import A2AHome, Gated, request, texts_of
from tests.a2a.test_perimeter import error_of, post, rpc, runs_of, send_params

COMPLETED = TaskState.TASK_STATE_COMPLETED


async def _send(gated: Gated, sent: SendMessageRequest, agent: str = "gated") -> Task:
    async with gated.served.client(agent, gated.token) as client:
        answers = [answer async for answer in client.send_message(sent)]
    task: Task = answers[-1].task
    return task


def _again(sent: SendMessageRequest, wait: bool) -> SendMessageRequest:
    """The same message, sent again (blocking, or not)."""
    copy = SendMessageRequest()
    copy.CopyFrom(sent)
    copy.configuration.return_immediately = not wait
    return copy


async def test_a_message_sent_again_is_its_first_task_and_its_turn_runs_once(
    gated: Gated,
) -> None:
    first = request("first", return_immediately=True)
    task = await _send(gated, first)
    assert await gated.started(1)
    again = await _send(gated, _again(first, wait=False))
    assert again.id == task.id and again.context_id == task.context_id
    # Sent again blocking, it is answered once that turn has ended, as the first send would.
    waiting = asyncio.create_task(_send(gated, _again(first, wait=True)))
    gated.let_end(1)
    ended = await asyncio.wait_for(waiting, 30)
    assert ended.id == task.id and ended.status.state == COMPLETED
    assert texts_of(ended) == ["first", "reply 1"]
    # The client's text under the id the client gave it.
    assert ended.history[0].message_id == first.message.message_id
    # Sent again once over: the task as it ended, nothing run again.
    over = await _send(gated, _again(first, wait=True))
    assert over.id == task.id and over.status.state == COMPLETED
    assert len(gated.runs()) == 1
    async with gated.served.client("gated", gated.token) as client:
        listed = await client.list_tasks(ListTasksRequest())
    assert [t.id for t in listed.tasks] == [task.id]


async def test_a_text_that_continues_a_task_sent_again_joins_it_once(gated: Gated) -> None:
    task = await _send(gated, request("first", return_immediately=True))
    assert await gated.started(1)
    more = request("second", task_id=task.id, return_immediately=True)
    await _send(gated, more)
    again = await _send(gated, _again(more, wait=False))
    assert again.id == task.id
    assert texts_of(await gated.get(task.id)) == ["first", "second"]
    gated.let_end(1)
    assert await gated.started(2)
    gated.let_end(2)
    assert len(gated.runs()) == 2


async def test_a_messageId_sent_before_with_other_text_is_refused_and_nothing_kept(
    gated: Gated,
) -> None:
    first = request("first", return_immediately=True)
    task = await _send(gated, first)
    other = _again(first, wait=False)
    other.message.parts[0].text = "something else"
    with pytest.raises((InvalidParamsError, A2AClientError)) as refused:
        await _send(gated, other)
    assert "was sent before with other text" in str(refused.value)
    elsewhere = _again(first, wait=False)
    elsewhere.message.context_id = "another-context"
    with pytest.raises((InvalidParamsError, A2AClientError)) as moved:
        await _send(gated, elsewhere)
    assert f"task {task.id} is in context" in str(moved.value)
    assert texts_of(await gated.get(task.id)) == ["first"]
    assert len(gated.runs()) == 1


async def test_one_messageId_to_two_agents_is_two_messages(gated: Gated) -> None:
    gated.served.hire("other")
    first = request("hello", return_immediately=True)
    to_gated = await _send(gated, first)
    to_other = await _send(gated, _again(first, wait=True), agent="other")
    assert to_other.status.state == COMPLETED and to_other.id != to_gated.id


async def test_another_clients_messageId_is_its_own_message_never_the_first_task(
    gated: Gated,
) -> None:
    first = request("first", return_immediately=True)
    task = await _send(gated, first)
    intruder = gated.served.client_token("intruder")
    async with gated.served.client("gated", intruder) as client:
        sent = _again(first, wait=False)
        answers = [answer async for answer in client.send_message(sent)]
    theirs = answers[-1].task
    assert theirs.id != task.id and theirs.context_id != task.context_id
    assert texts_of(theirs) == ["first"]
    assert len(gated.runs()) == 2  # each client's message its own turn


@pytest.mark.parametrize(
    ("message_id", "said"),
    [("m\x00", "no NUL"), ("m" * 201, "at most 200 characters")],
)
def test_a_messageId_the_store_cannot_keep_is_refused(
    a2a_home: A2AHome, message_id: str, said: str
) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    body = rpc("SendMessage", send_params("hello", messageId=message_id))
    error = error_of(post(a2a_home, "scribe", token, body))
    assert error["code"] == INVALID_PARAMS and said in error["message"]
    assert runs_of(a2a_home, "scribe") == []
