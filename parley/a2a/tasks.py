"""A client's text and the run that has it, as an A2A task: queued is SUBMITTED, running is
WORKING, finished is COMPLETED with the reply as its artifact, stopped is CANCELED, failed is
FAILED with the reason as the status message. A stopped or failed turn's partial reply stays an
artifact, marked ``cut_short``: what the client was streamed is never taken back.

A running turn that waits for a person's approval of a tool call (asked as a turn of that
person) is INPUT_REQUIRED, its question the status message: in a client's context the client
stands for the person who let it in, and its next message with the task's id answers
(``parley/a2a/answers.py``)."""

from __future__ import annotations

from datetime import datetime

from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)

from parley.a2a.answers import question
from parley.approvals.model import Approval
from parley.runs.model import Run, RunState
from parley.store import Tx
from parley.store.a2a import TaskRow

STATES = {
    RunState.QUEUED: TaskState.TASK_STATE_SUBMITTED,
    RunState.RUNNING: TaskState.TASK_STATE_WORKING,
    RunState.FINISHED: TaskState.TASK_STATE_COMPLETED,
    RunState.STOPPED: TaskState.TASK_STATE_CANCELED,
    RunState.FAILED: TaskState.TASK_STATE_FAILED,
}
# Which runs a task of a state filter stands for ("none": a text not yet given a run), and
# whether a running one waits for an approval; a state no Parley task takes matches none.
RUN_STATES_OF: dict[int, tuple[tuple[str, ...], bool | None]] = {
    TaskState.TASK_STATE_SUBMITTED: ((RunState.QUEUED.value, "none"), None),
    TaskState.TASK_STATE_WORKING: ((RunState.RUNNING.value,), False),
    TaskState.TASK_STATE_INPUT_REQUIRED: ((RunState.RUNNING.value,), True),
    TaskState.TASK_STATE_COMPLETED: ((RunState.FINISHED.value,), None),
    TaskState.TASK_STATE_CANCELED: ((RunState.STOPPED.value,), None),
    TaskState.TASK_STATE_FAILED: ((RunState.FAILED.value,), None),
    TaskState.TASK_STATE_REJECTED: ((), None),
    TaskState.TASK_STATE_AUTH_REQUIRED: ((), None),
}
TERMINAL = (
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_REJECTED,
)


async def now_of(tx: Tx, task: TaskRow) -> tuple[Run | None, Approval | None]:
    """The run that has the task's text now, and the approval it waits for, if any."""
    if task.run_id is None:
        return None, None
    run = await tx.runs.by_id(task.run_id)
    assert run is not None  # a text's run is never deleted
    return run, await asking_of(tx, run)


async def asking_of(tx: Tx, run: Run) -> Approval | None:
    """The approval ``run`` waits for, if it does (the first asked, of those it may wait for at
    once)."""
    if run.state is not RunState.RUNNING:
        return None
    waiting = [approval for approval in await tx.approvals.of_run(run.id) if approval.is_open]
    return waiting[0] if waiting else None


def task_id(task: TaskRow) -> str:
    return str(task.message_id)


def state_of(run: Run | None, asking: Approval | None = None) -> TaskState:
    if run is None:
        return TaskState.TASK_STATE_SUBMITTED
    if asking is not None:  # read open: its run is running
        return TaskState.TASK_STATE_INPUT_REQUIRED
    return STATES[run.state]


def as_task(
    task: TaskRow,
    run: Run | None,
    history_length: int | None = None,
    asking: Approval | None = None,
) -> Task:
    """The task as a client reads it (``history_length``: at most that many messages, the
    newest; None: all of them; ``asking``: the approval its turn waits for)."""
    said = history(task, run)
    if history_length is not None:
        said = said[len(said) - history_length :] if history_length else []
    return Task(
        id=task_id(task),
        context_id=task.context,
        status=status(task, run, asking),
        artifacts=[reply_artifact(run)] if run is not None and run.output else [],
        history=said,
    )


def status(task: TaskRow, run: Run | None, asking: Approval | None = None) -> TaskStatus:
    state = state_of(run, asking)
    said = None
    if asking is not None and state is TaskState.TASK_STATE_INPUT_REQUIRED:
        said = agent_message(task, question(asking), f"asking-{asking.id}")
    elif run is not None and run.reason and state in TERMINAL:
        said = agent_message(task, f"{_why(run)}: {run.reason}")
    return TaskStatus(state=state, message=said, timestamp=_when(task, run))


def reply_artifact(run: Run, text: str | None = None) -> Artifact:
    """The turn's reply (or ``text``, a part of it while it streams)."""
    artifact = Artifact(
        artifact_id=f"reply-{run.id}", name="reply", parts=[Part(text=text or run.output or "")]
    )
    if run.cut_short:
        artifact.metadata.update({"cut_short": True})
    return artifact


def history(task: TaskRow, run: Run | None) -> list[Message]:
    said = [
        Message(
            message_id=f"text-{task.message_id}",
            context_id=task.context,
            task_id=task_id(task),
            role=Role.ROLE_USER,
            parts=[Part(text=task.body)],
        )
    ]
    if run is not None and run.output and not run.is_open:
        said.append(agent_message(task, run.output, f"reply-{run.id}"))
    return said


def agent_message(task: TaskRow, text: str, message_id: str | None = None) -> Message:
    return Message(
        message_id=message_id or f"status-{task.message_id}",
        context_id=task.context,
        task_id=task_id(task),
        role=Role.ROLE_AGENT,
        parts=[Part(text=text)],
    )


def _why(run: Run) -> str:
    return "stopped" if run.state is RunState.STOPPED else "failed"


def _when(task: TaskRow, run: Run | None) -> datetime:
    if run is None:
        return task.created_at
    return run.finished_at or run.started_at or run.created_at
