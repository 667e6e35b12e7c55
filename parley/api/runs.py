"""/api/v1/runs: runs as far as the caller may read their topic; stop; follow one as it runs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from parley.api.deps import Caller, Ctx
from parley.api.schemas.runs import AnswerIn, RunOut, StoppedOut
from parley.api.schemas.topics import MessageOut, RunDetailOut
from parley.api.views import topic_out
from parley.context import Context
from parley.conversations.lifetime import stop_run as stop_one_run
from parley.conversations.visibility import only_readable, readable_topic
from parley.errors import NotFound
from parley.hub.human import answer_turn, turns_waiting_for
from parley.people.model import Person
from parley.runs.model import Run, RunState
from parley.store import Tx

router = APIRouter(tags=["runs"])


async def _readable_run(tx: Tx, person: Person, run_id: int) -> Run:
    run = await tx.runs.by_id(run_id)
    if run is None:
        raise NotFound(f"no run {run_id}")
    try:
        await readable_topic(tx, person, run.topic_id, "run")
    except NotFound:
        raise NotFound(f"no run {run_id}") from None
    return run


@router.get("/runs")
async def list_runs(
    caller: Caller,
    ctx: Ctx,
    agent: str | None = None,
    state: list[RunState] | None = Query(None),
    limit: int = Query(100, ge=1, le=1000),
) -> list[RunOut]:
    async with ctx.store.transaction() as tx:
        agent_id = None
        if agent is not None:
            found = await tx.agents.by_name(agent)
            if found is None:
                raise NotFound(f"no agent named {agent!r}")
            agent_id = found.id
        runs = await tx.runs.listed(agent_id=agent_id, states=state, limit=limit)
        topics = await tx.topics.by_ids({run.topic_id for run in runs})
        readable = {t.id for t in await only_readable(tx, caller, list(topics.values()))}
        return [RunOut.of(run) for run in runs if run.topic_id in readable]


@router.get("/runs/{run_id}")
async def show_run(run_id: int, caller: Caller, ctx: Ctx) -> RunDetailOut:
    async with ctx.store.transaction() as tx:
        return await _detail(tx, await _readable_run(tx, caller, run_id))


async def _detail(tx: Tx, run: Run) -> RunDetailOut:
    topic = await tx.topics.by_id(run.topic_id)
    assert topic is not None
    shown = await topic_out(tx, topic)
    inputs = await tx.messages.inputs(run.id)
    return RunDetailOut(
        run=RunOut.of(run), root=shown.root, topic=shown, input=[MessageOut.of(m) for m in inputs]
    )


@router.post("/runs/{run_id}/stop")
async def stop_run(run_id: int, caller: Caller, ctx: Ctx) -> StoppedOut:
    """Cancel the turn; idempotent (stopping a run that already ended stops nothing)."""
    async with ctx.store.transaction() as tx:
        run = await _readable_run(tx, caller, run_id)
        stopped = await stop_one_run(tx, ctx.clock.now(), run, f"stopped by {caller.name}")
    return StoppedOut(stopped=[r.id for r in stopped])


@router.get("/me/turns")
async def my_turns(caller: Caller, ctx: Ctx) -> list[RunDetailOut]:
    """Turns of the human agents that are you, waiting for your answer."""
    async with ctx.store.transaction() as tx:
        return [await _detail(tx, run) for run in await turns_waiting_for(tx, caller)]


@router.post("/runs/{run_id}/answer")
async def answer(run_id: int, body: AnswerIn, caller: Caller, ctx: Ctx) -> RunOut:
    """Your answer as a human agent: it ends the turn, as a brain's reply would (and with
    ``complete``, completes the task it works on)."""
    async with ctx.store.transaction() as tx:
        run = await answer_turn(tx, ctx.clock, caller, run_id, body.text, body.complete)
    return RunOut.of(run)


@router.get("/runs/{run_id}/events")
async def follow_run(run_id: int, caller: Caller, ctx: Ctx) -> StreamingResponse:
    """Newline-delimited JSON: ``{"kind": "chunk", "text"}`` as the reply is produced, then
    ``{"kind": "end", "state", "output", "reason"}``."""
    async with ctx.store.transaction() as tx:
        await _readable_run(tx, caller, run_id)
    return StreamingResponse(_events(ctx, run_id), media_type="application/x-ndjson")


async def _events(ctx: Context, run_id: int) -> AsyncIterator[bytes]:
    with ctx.runtime.watch.watching(run_id) as queue:
        run = await _run_now(ctx, run_id)  # after subscribing, so no ending slips between
        while run.is_open:
            event = await queue.get()
            if event.kind == "chunk":
                yield _line({"kind": "chunk", "text": event.text})
            else:
                run = await _run_now(ctx, run_id)
    yield _line(
        {"kind": "end", "state": run.state.value, "output": run.output, "reason": run.reason}
    )


async def _run_now(ctx: Context, run_id: int) -> Run:
    async with ctx.store.transaction() as tx:
        run = await tx.runs.by_id(run_id)
    assert run is not None
    return run


def _line(event: dict[str, object]) -> bytes:
    return json.dumps(event).encode() + b"\n"
