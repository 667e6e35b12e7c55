"""What a task's stream carries besides the task itself: its reply's text as it is written,
WORKING statuses (a tool called, an approval decided, the turn started, the task going on in
its next turn), and its end or its wait for input."""

from __future__ import annotations

import json

from a2a.types.a2a_pb2 import (
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

from parley.a2a.tasks import Now, agent_message, reply_artifact, status, task_id
from parley.runs.model import Run
from parley.store.a2a_tasks import TaskRow


def written(task: TaskRow, run: Run, text: str) -> TaskArtifactUpdateEvent:
    """A part of ``run``'s reply, as the turn writes it."""
    return TaskArtifactUpdateEvent(
        task_id=task_id(task),
        context_id=task.context,
        artifact=reply_artifact(run, text),
        append=True,
    )


def working(task: TaskRow, kind: str, text: str) -> TaskStatusUpdateEvent:
    said = text
    if kind == "tool":
        call = json.loads(text)
        said = f"tool {call.get('tool')} called"
    elif kind == "approval":
        approval = json.loads(text)
        said = f"tool {approval.get('tool')}: {approval.get('state')}"
        if approval.get("state") != "waiting":
            said += f" by {approval.get('decided_by') or 'nobody in time'}"
            said += f" ({approval['reason']})" if approval.get("reason") else ""
    elif kind == "state":
        said = f"the turn is {text}"
    return TaskStatusUpdateEvent(
        task_id=task_id(task),
        context_id=task.context,
        status=TaskStatus(state=TaskState.TASK_STATE_WORKING, message=agent_message(task, said)),
    )


def final(now: Now) -> TaskStatusUpdateEvent:
    """The task's end, or its wait for input."""
    return TaskStatusUpdateEvent(
        task_id=task_id(now.task), context_id=now.task.context, status=status(now)
    )


def going_on(task: TaskRow) -> TaskStatusUpdateEvent:
    said = agent_message(task, "the task goes on in its next turn")
    return TaskStatusUpdateEvent(
        task_id=task_id(task),
        context_id=task.context,
        status=TaskStatus(state=TaskState.TASK_STATE_WORKING, message=said),
    )
