"""The runs pages: what is running and waiting across the installation, as far as the reader
may read its topic (a live part, each run with Stop), and the turns of human agents waiting for
the person signed in, each with an answer box. (A run's reply stream is chat.py's.)"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from parley.api.ids import Id
from parley.channels.approvals import decide
from parley.context import Context
from parley.conversations.lifetime import stop_run as stop_one_run
from parley.hub.human import answer_turn
from parley.people.model import Person
from parley.reads.approvals import waiting_page
from parley.reads.runs import readable_run, run_lineage, runs_page, turns_page
from parley.runs.model import OPEN_STATES, RunState
from parley.web.parts import live_values
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, Viewer, WebParts, as_page

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])
STATES = [state.value for state in RunState]


@router.get("/runs")
async def runs(
    request: Request,
    viewer: Viewer,
    ctx: Ctx,
    web: WebParts,
    agent: str = "",
    state: list[RunState] | None = Query(None),
    before: str | None = None,
) -> Response:
    states = state or list(OPEN_STATES)  # what is running and waiting, unless asked otherwise
    values = await read_runs(ctx, viewer.person, agent, states, before)
    return web.pages.page(request, "runs.html", viewer, states=STATES, before=before, **values)


@router.get("/runs/live")
async def runs_live(
    request: Request,
    viewer: Viewer,
    ctx: Ctx,
    web: WebParts,
    agent: str = "",
    state: list[RunState] | None = Query(None),
    before: str | None = None,
) -> Response:
    states = state or list(OPEN_STATES)
    await read_runs(ctx, viewer.person, agent, states, before)  # the page's refusal first

    async def read(person: Person) -> dict[str, Any]:
        return await read_runs(ctx, person, agent, states, before)

    return live_values(request, ctx, web, "_runs.html", read)


@router.get("/runs/{run_id}")
async def run_page(
    run_id: Id, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts
) -> Response:
    """One run, inspected: where it sits, when, what it was given and said, its tool calls,
    its stderr, the run that set it off and those it set off; live while it runs."""
    values = await read_run(ctx, viewer.person, run_id)
    return web.pages.page(request, "run.html", viewer, **values)


@router.get("/runs/{run_id}/live")
async def run_live(
    run_id: Id, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts
) -> Response:
    await read_run(ctx, viewer.person, run_id)  # the page's refusal first

    async def read(person: Person) -> dict[str, Any]:
        return await read_run(ctx, person, run_id)

    return live_values(request, ctx, web, "_run.html", read)


async def read_run(ctx: Context, person: Person, run_id: int) -> dict[str, Any]:
    async with ctx.store.transaction() as tx:
        return {"lineage": await run_lineage(tx, person, run_id)}


@router.post("/runs/{run_id}/stop")
async def stop(run_id: Id, posted: Post, ctx: Ctx) -> Response:
    person = posted.viewer.person
    async with ctx.store.transaction() as tx:
        run = await readable_run(tx, person, run_id)
        stopped = await stop_one_run(tx, ctx.clock.now(), run, f"stopped by {person.name}")
    said = f"Stopped run {run_id}." if stopped else f"Run {run_id} had already ended."
    # From the run's own page, back to it; from a list, back to the list.
    back = f"/runs/{run_id}" if posted.form.get("from") == "run" else "/runs"
    return back_to(back, said)


@router.get("/turns")
async def turns(
    request: Request, viewer: Viewer, ctx: Ctx, web: WebParts, before: str | None = None
) -> Response:
    async with ctx.store.transaction() as tx:
        found = await turns_page(tx, viewer.person, before=before)
        approvals = await waiting_page(tx, viewer.person, ctx.clock.now())
    return web.pages.page(request, "turns.html", viewer, found=found, approvals=approvals)


@router.post("/approvals/{approval_id}/approve")
async def approve(approval_id: Id, posted: Post, ctx: Ctx) -> Response:
    async with ctx.store.transaction() as tx:
        await decide(tx, ctx.clock, posted.viewer.person, approval_id, True)
    return back_to("/turns", f"Approved call {approval_id}.")


@router.post("/approvals/{approval_id}/deny")
async def deny(approval_id: Id, posted: Post, ctx: Ctx) -> Response:
    reason = posted.form.get("reason").strip() or None
    async with ctx.store.transaction() as tx:
        await decide(tx, ctx.clock, posted.viewer.person, approval_id, False, reason)
    return back_to("/turns", f"Denied call {approval_id}.")


@router.post("/runs/{run_id}/answer")
async def answer(run_id: Id, posted: Post, ctx: Ctx) -> Response:
    form = posted.form
    async with ctx.store.transaction() as tx:
        await answer_turn(
            tx,
            ctx.clock,
            ctx.runtime.budget,
            posted.viewer.person,
            run_id,
            form.get("text"),
            form.flag("complete"),
        )
    return back_to("/turns", f"Answered run {run_id}.")


async def read_runs(
    ctx: Context, person: Person, agent: str, states: list[RunState], before: str | None
) -> dict[str, Any]:
    async with ctx.store.transaction() as tx:
        found = await runs_page(tx, person, agent or None, states, before=before)
    # The list's filters, for its "Older" link: the live part renders it too.
    pairs = [("agent", agent)] if agent else []
    query = urlencode(pairs + [("state", s.value) for s in states])
    return {"found": found, "agent": agent, "chosen": [s.value for s in states], "query": query}
