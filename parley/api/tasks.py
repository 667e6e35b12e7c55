"""/api/v1/tasks: work given to agents; readable by every person, a deleted one
by owners only."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from parley.api.deps import Caller, Ctx
from parley.api.ids import Id, OptionalId
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.base import Page, page_of
from parley.api.schemas.runs import StoppedOut
from parley.api.schemas.topics import (
    QueuedOut,
    TaskGivenOut,
    TaskIn,
    TextIn,
    TopicDetailOut,
    TopicOut,
)
from parley.context import Context
from parley.conversations.lifetime import stop_root
from parley.conversations.model import TaskStatus, Topic
from parley.conversations.tasks import (
    cancel_task,
    create_task,
    delete_task,
    say_in_task,
    task_by_id,
)
from parley.reads.details import topic_detail
from parley.reads.topics import readable_task, tasks_page, views

router = APIRouter(tags=["tasks"])


@router.post("/tasks", status_code=201)
async def create(body: TaskIn, caller: Caller, ctx: Ctx) -> TaskGivenOut:
    """Give an agent a task; it runs as a topic every member reads. The answer names the run
    that takes its text."""
    async with ctx.store.transaction() as tx:
        task, queued = await create_task(tx, ctx.clock, caller, body.agent, body.text)
        (view,) = await views(tx, [task])
    return TaskGivenOut.given(view, queued)


@router.get("/tasks")
async def list_tasks(
    caller: Caller,
    ctx: Ctx,
    status: TaskStatus | None = None,
    deleted: bool = False,
    parent: OptionalId = None,
    limit: Limit = DEFAULT_LIMIT,
    before: Before = None,
) -> Page[TopicOut]:
    """Tasks, newest first; with ``status``, those in it; with ``deleted``, the deleted ones too
    (only owners read them); with ``parent``, the subtasks spawned in that topic."""
    async with ctx.store.transaction() as tx:
        found = await tasks_page(tx, caller, status, deleted, parent, limit, before)
    return page_of(found, TopicOut.of_view)


@router.get("/tasks/{task_id}")
async def show(task_id: Id, caller: Caller, ctx: Ctx) -> TopicDetailOut:
    """A task with its log, subtasks, agent conversations and runs; a deleted one for owners."""
    async with ctx.store.transaction() as tx:
        task = await readable_task(tx, caller, task_id)
        return TopicDetailOut.of(await topic_detail(tx, caller, task))


@router.post("/tasks/{task_id}/messages", status_code=202)
async def say_to(task_id: Id, body: TextIn, caller: Caller, ctx: Ctx) -> QueuedOut:
    """Give more text to the agent working on an open task (its giver and owners may): its
    next turn continues the task's session, told so if its last turn was stopped. Its reply
    comes in a run; an ended task takes no more text (409)."""
    async with ctx.store.transaction() as tx:
        queued = await say_in_task(tx, ctx.clock, caller, task_id, body.text)
    return QueuedOut.of(queued)


@router.post("/tasks/{task_id}/cancel")
async def cancel(task_id: Id, caller: Caller, ctx: Ctx) -> TopicOut:
    """Cancel the task: it ends cancelled and every agent's work under it stops."""
    async with ctx.store.transaction() as tx:
        await cancel_task(tx, ctx.clock, await task_by_id(tx, task_id), caller)
        (view,) = await views(tx, [await task_by_id(tx, task_id)])
    return TopicOut.of_view(view)


@router.post("/tasks/{task_id}/stop")
async def stop(task_id: Id, caller: Caller, ctx: Ctx) -> StoppedOut:
    """Stop the task's turn and every agent's work under it: its agent conversations and
    subtasks, at any depth. The task stays open."""
    async with ctx.store.transaction() as tx:
        task = await task_by_id(tx, task_id)
        stopped = await stop_root(tx, ctx.clock.now(), task, f"stopped by {caller.name}")
    return StoppedOut(stopped=[run.id for run in stopped])


@router.delete("/tasks/{task_id}", status_code=204)
async def delete(task_id: Id, caller: Caller, ctx: Ctx) -> None:
    """Close the task: its runs end, its agent conversations close; history stays for owners."""
    async with ctx.store.transaction() as tx:
        await delete_task(tx, ctx.clock, await task_by_id(tx, task_id), caller)


@router.get("/tasks/{task_id}/events")
async def follow_task(task_id: Id, caller: Caller, ctx: Ctx) -> StreamingResponse:
    """Newline-delimited JSON: ``{"kind": "refusal", "text"}`` for each text sent from the task
    that was refused meanwhile (a peer's connection paused, …), and ``{"kind": "end", "task"}``
    once the task has ended (done, failed, cancelled) or was deleted, at once if it already
    had; until then the line does not come."""
    async with ctx.store.transaction() as tx:
        await readable_task(tx, caller, task_id)
    return StreamingResponse(_task_events(ctx, task_id), media_type="application/x-ndjson")


async def _task_events(ctx: Context, task_id: int) -> AsyncIterator[bytes]:
    refused: list[str] = []

    def told(notice: str) -> None:
        refused.append(notice)
        ended.set()

    with (
        ctx.runtime.topic_watch.watching(task_id) as ended,
        ctx.runtime.topic_watch.refusals(task_id, told),
    ):
        # Read after subscribing, so no ending slips between the read and the wait.
        while (found := await _ended_task(ctx, task_id)) is None:
            await ended.wait()
            ended.clear()
            while refused:
                yield _line({"kind": "refusal", "text": refused.pop(0)})
    yield _line({"kind": "end", "task": found.model_dump(mode="json")})


def _line(event: dict[str, object]) -> bytes:
    return json.dumps(event).encode() + b"\n"


async def _ended_task(ctx: Context, task_id: int) -> TopicOut | None:
    async with ctx.store.transaction() as tx:
        task = await tx.topics.by_id(task_id)  # readable when the caller came
        assert task is not None  # topics are closed, never removed
        if _is_open(task):
            return None
        (view,) = await views(tx, [task])
    return TopicOut.of_view(view)


def _is_open(task: Topic) -> bool:
    return task.status == TaskStatus.OPEN.value and not task.is_closed
