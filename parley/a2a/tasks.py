"""A client's text and the run that has it, as an A2A task: queued is SUBMITTED, running is
WORKING, finished is COMPLETED with the reply as its artifact, stopped is CANCELED, failed is
FAILED with the reason as the status message. A stopped or failed turn's partial reply stays an
artifact, marked ``cut_short``: what the client was streamed is never taken back.

A task goes on while it is open: a later text naming it continues it (``calls.py``). It then
follows its texts' runs in order (the earliest still open, else the newest): a queued run after
an ended one is WORKING, not SUBMITTED; its history is each run's texts, then that run's reply
once ended; its artifacts, each run's reply.

A running turn that waits for a person's approval of a tool call (asked as a turn of that
person) is INPUT_REQUIRED, its question the status message: in a client's context the client
stands for the person who let it in, and its next message with the task's id answers
(``parley/a2a/answers.py``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
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
from parley.a2a.contexts import sent_id
from parley.approvals.model import Approval
from parley.runs.model import Run, RunState
from parley.store import Tx
from parley.store.a2a_tasks import CONTINUED, TaskRow, TaskText

STATES = {
    RunState.QUEUED: TaskState.TASK_STATE_SUBMITTED,
    RunState.RUNNING: TaskState.TASK_STATE_WORKING,
    RunState.FINISHED: TaskState.TASK_STATE_COMPLETED,
    RunState.STOPPED: TaskState.TASK_STATE_CANCELED,
    RunState.FAILED: TaskState.TASK_STATE_FAILED,
}
# Which runs a task of a state filter stands for ("none": a text not yet given a run;
# ``CONTINUED``: a queued run after an ended one of the task, which ``Now.state`` reads as
# WORKING), and whether a running one waits for an approval; a state no Parley task takes
# matches none.
RUN_STATES_OF: dict[int, tuple[tuple[str, ...], bool | None]] = {
    TaskState.TASK_STATE_SUBMITTED: ((RunState.QUEUED.value, "none"), None),
    TaskState.TASK_STATE_WORKING: ((RunState.RUNNING.value, CONTINUED), False),
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


@dataclass(frozen=True)
class Now:
    """A task as it is now: its texts (its first, then those that continue it), the runs that
    have them in the order made, and the approval the run it follows now waits for, if any."""

    task: TaskRow
    texts: tuple[TaskText, ...]
    runs: tuple[Run, ...]
    asking: Approval | None = None

    @property
    def run(self) -> Run | None:
        """The run the task follows now: the earliest still open, else the newest (the store's
        ``CURRENT_RUN`` alike)."""
        open_runs = [run for run in self.runs if run.is_open]
        return open_runs[0] if open_runs else (self.runs[-1] if self.runs else None)

    @property
    def state(self) -> TaskState:
        run = self.run
        if run is None:
            return TaskState.TASK_STATE_SUBMITTED
        if self.asking is not None:  # read open: its run is running
            return TaskState.TASK_STATE_INPUT_REQUIRED
        if run.state is RunState.QUEUED and run is not self.runs[0]:
            return TaskState.TASK_STATE_WORKING  # a turn of it ended, its next waits
        return STATES[run.state]


async def now_of(tx: Tx, task: TaskRow) -> Now:
    """The task's texts and runs as they are now, and what its run asks, if it does."""
    texts = tuple(await tx.a2a.task_texts(task.message_id))
    found = await tx.runs.by_ids(sorted({t.run_id for t in texts if t.run_id is not None}))
    now = Now(task, texts, tuple(found[run_id] for run_id in sorted(found)))
    run = now.run
    return now if run is None else replace(now, asking=await asking_of(tx, run))


async def asking_of(tx: Tx, run: Run) -> Approval | None:
    """The approval ``run`` waits for, if it does (the first asked, of those it may wait for at
    once)."""
    if run.state is not RunState.RUNNING:
        return None
    waiting = [approval for approval in await tx.approvals.of_run(run.id) if approval.is_open]
    return waiting[0] if waiting else None


def task_id(task: TaskRow) -> str:
    return str(task.message_id)


def as_task(now: Now, history_length: int | None = None) -> Task:
    """The task as a client reads it (``history_length``: at most that many messages, the
    newest; None: all of them)."""
    said = history(now)
    if history_length is not None:
        said = said[len(said) - history_length :] if history_length else []
    return Task(
        id=task_id(now.task),
        context_id=now.task.context,
        status=status(now),
        artifacts=[reply_artifact(run) for run in now.runs if run.output],
        history=said,
    )


def status(now: Now) -> TaskStatus:
    state, run, task = now.state, now.run, now.task
    said = None
    if now.asking is not None and state is TaskState.TASK_STATE_INPUT_REQUIRED:
        said = agent_message(task, question(now.asking), f"asking-{now.asking.id}")
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


def history(now: Now) -> list[Message]:
    """Each run's texts of the task, then its reply once it has ended, run by run; then any
    text no run has yet."""
    said: list[Message] = []
    for run in now.runs:
        said.extend(_client_text(now.task, text) for text in now.texts if text.run_id == run.id)
        if run.output and not run.is_open:
            said.append(agent_message(now.task, run.output, f"reply-{run.id}"))
    said.extend(_client_text(now.task, text) for text in now.texts if text.run_id is None)
    return said


def _client_text(task: TaskRow, text: TaskText) -> Message:
    """The client's text, under the id it gave it (a text without one: Parley's)."""
    return Message(
        message_id=sent_id(text.sent_as) if text.sent_as else f"text-{text.message_id}",
        context_id=task.context,
        task_id=task_id(task),
        role=Role.ROLE_USER,
        parts=[Part(text=text.body)],
    )


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
