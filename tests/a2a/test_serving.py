"""A Parley agent answering a2a-sdk's own client: card, send, stream, get, list, cancel."""

from __future__ import annotations

from a2a.helpers import get_artifact_text
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState

from tests.a2a.support import A2AHome, a2a_home, request

__all__ = ["a2a_home"]


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
