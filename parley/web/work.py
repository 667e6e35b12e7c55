"""The task pages: the tasks a person may read, one task as it works (its log, runs and
subtasks, kept current as a live part), and the forms that give, continue, stop and cancel a
task. Each calls the library function the API's route calls, so the rules are the same."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from parley.api.ids import Id
from parley.context import Context
from parley.conversations.lifetime import stop_root
from parley.conversations.model import TaskStatus
from parley.conversations.tasks import cancel_task, create_task, may_direct, say_in_task, task_by_id
from parley.errors import Invalid
from parley.people.model import Person
from parley.reads.details import topic_detail
from parley.reads.topics import readable_task, tasks_page
from parley.web.chat import HOME_AGENTS, talkable
from parley.web.parts import live_values
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, Viewer, WebParts, as_page

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])
STATUSES = [status.value for status in TaskStatus]


def task_status(given: str) -> TaskStatus | None:
    """The filter's status; empty: any."""
    if not given:
        return None
    if given not in STATUSES:
        raise Invalid(f"status must be one of {', '.join(STATUSES)}, not {given[:40]!r}")
    return TaskStatus(given)


@router.get("/tasks")
async def tasks(
    request: Request,
    viewer: Viewer,
    ctx: Ctx,
    web: WebParts,
    status: str = "",
    deleted: bool = False,
    before: str | None = None,
) -> Response:
    person = viewer.person
    async with ctx.store.transaction() as tx:
        found = await tasks_page(tx, person, task_status(status), deleted, before=before)
        agents = await talkable(tx, HOME_AGENTS)
    query = urlencode(
        {k: v for k, v in (("status", status), ("deleted", "true" if deleted else "")) if v}
    )
    return web.pages.page(
        request,
        "tasks.html",
        viewer,
        found=found,
        agents=agents,
        chosen=status,
        statuses=STATUSES,
        deleted=deleted,
        query=query,
    )


@router.post("/tasks")
async def give_task(posted: Post, ctx: Ctx) -> Response:
    agent, text = posted.form.required("agent", "Agent"), posted.form.get("text")
    async with ctx.store.transaction() as tx:
        task, _ = await create_task(tx, ctx.clock, posted.viewer.person, agent, text)
    return back_to(f"/tasks/{task.id}", f"Task {task.id} given to {agent}.")


@router.get("/tasks/{task_id}")
async def task_page(
    task_id: Id, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts
) -> Response:
    values = await read_task(ctx, viewer.person, task_id)
    return web.pages.page(request, "task.html", viewer, **values)


@router.get("/tasks/{task_id}/live")
async def task_live(
    task_id: Id, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts
) -> Response:
    await read_task(ctx, viewer.person, task_id)  # the page's refusal, before streaming

    async def read(person: Person) -> dict[str, Any]:
        return await read_task(ctx, person, task_id)

    return live_values(request, ctx, web, "_task.html", read)


@router.post("/tasks/{task_id}/messages")
async def say_to_task(task_id: Id, posted: Post, ctx: Ctx) -> Response:
    text = posted.form.get("text")
    async with ctx.store.transaction() as tx:
        await say_in_task(tx, ctx.clock, posted.viewer.person, task_id, text)
    return back_to(f"/tasks/{task_id}")


@router.post("/tasks/{task_id}/stop")
async def stop_task(task_id: Id, posted: Post, ctx: Ctx) -> Response:
    name = posted.viewer.person.name
    async with ctx.store.transaction() as tx:
        task = await task_by_id(tx, task_id)
        stopped = await stop_root(tx, ctx.clock.now(), task, f"stopped by {name}")
    said = f"Stopped {len(stopped)} turn(s)." if stopped else "Nothing was running."
    return back_to(f"/tasks/{task_id}", said)


@router.post("/tasks/{task_id}/cancel")
async def cancel(task_id: Id, posted: Post, ctx: Ctx) -> Response:
    async with ctx.store.transaction() as tx:
        task = await task_by_id(tx, task_id)
        await cancel_task(tx, ctx.clock, task, posted.viewer.person)
    return back_to(f"/tasks/{task_id}", f"Task {task_id} cancelled.")


async def read_task(ctx: Context, person: Person, task_id: int) -> dict[str, Any]:
    async with ctx.store.transaction() as tx:
        task = await readable_task(tx, person, task_id)
        detail = await topic_detail(tx, person, task)
    # The owner or the person who gave it may write to it or cancel it while it is open (the
    # library refuses anyone else).
    is_open = task.status == TaskStatus.OPEN.value and not task.is_closed
    return {
        "task": task,
        "detail": detail,
        "log": list(reversed(detail.messages.items)),
        "directs": may_direct(task, person) and is_open,
    }
