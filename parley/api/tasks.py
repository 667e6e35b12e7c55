"""/api/v1/tasks: work given to agents; readable by every person (DESIGN §3.2.6)."""

from __future__ import annotations

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.schemas.runs import StoppedOut
from parley.api.schemas.topics import TaskIn, TopicDetailOut, TopicOut
from parley.api.views import topic_detail, topic_out, topics_out
from parley.conversations.lifetime import stop_root
from parley.conversations.model import TaskStatus, TopicKind
from parley.conversations.tasks import cancel_task, create_task, delete_task, task_by_id
from parley.people.accounts import require_owner

router = APIRouter(tags=["tasks"])


@router.post("/tasks", status_code=201)
async def create(body: TaskIn, caller: Caller, ctx: Ctx) -> TopicOut:
    async with ctx.store.transaction() as tx:
        task = await create_task(tx, ctx.clock, caller, body.agent, body.text)
        return await topic_out(tx, task)


@router.get("/tasks")
async def list_tasks(
    caller: Caller, ctx: Ctx, status: TaskStatus | None = None, deleted: bool = False
) -> list[TopicOut]:
    """Open and ended tasks; with ``deleted`` (owners only) the deleted ones too."""
    if deleted:
        require_owner(caller, "list deleted tasks")
    async with ctx.store.transaction() as tx:
        tasks = await tx.topics.of_kind(TopicKind.TASK, include_closed=deleted)
        return await topics_out(tx, [t for t in tasks if status in (None, t.status)])


@router.get("/tasks/{task_id}")
async def show(task_id: int, caller: Caller, ctx: Ctx) -> TopicDetailOut:
    """A task with its log, subtasks, agent conversations and runs; a deleted one for owners."""
    async with ctx.store.transaction() as tx:
        return await topic_detail(tx, caller, await task_by_id(tx, task_id, caller))


@router.post("/tasks/{task_id}/cancel")
async def cancel(task_id: int, caller: Caller, ctx: Ctx) -> TopicOut:
    async with ctx.store.transaction() as tx:
        await cancel_task(tx, ctx.clock, await task_by_id(tx, task_id), caller)
        return await topic_out(tx, await task_by_id(tx, task_id))


@router.post("/tasks/{task_id}/stop")
async def stop(task_id: int, caller: Caller, ctx: Ctx) -> StoppedOut:
    """Stop the task's turn and every agent's work under it: its agent conversations and
    subtasks, at any depth. The task stays open."""
    async with ctx.store.transaction() as tx:
        task = await task_by_id(tx, task_id)
        stopped = await stop_root(tx, ctx.clock.now(), task, f"stopped by {caller.name}")
    return StoppedOut(stopped=[run.id for run in stopped])


@router.delete("/tasks/{task_id}", status_code=204)
async def delete(task_id: int, caller: Caller, ctx: Ctx) -> None:
    """Close the task: its runs end, its agent conversations close; history stays for owners."""
    async with ctx.store.transaction() as tx:
        await delete_task(tx, ctx.clock, await task_by_id(tx, task_id), caller)
