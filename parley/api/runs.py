"""/api/v1/runs: runs as far as the caller may read their topic; stop; follow one as it runs."""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from parley.api.deps import Caller, Ctx
from parley.api.ids import Id, OptionalId
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.base import Page, page_of
from parley.api.schemas.runs import AnswerIn, RunOut, StoppedOut
from parley.api.schemas.topics import RunDetailOut
from parley.context import Context
from parley.conversations.lifetime import stop_run as stop_one_run
from parley.hub.following import following
from parley.hub.human import answer_turn
from parley.reads.runs import readable_run, run_detail, runs_page, turns_page
from parley.runs.model import RunState

router = APIRouter(tags=["runs"])


@router.get("/runs")
async def list_runs(
    caller: Caller,
    ctx: Ctx,
    agent: str | None = None,
    state: list[RunState] | None = Query(None),
    topic: OptionalId = None,
    limit: Limit = DEFAULT_LIMIT,
    before: Before = None,
) -> Page[RunOut]:
    """Runs whose topic you may read, newest first: a full page whenever there are that many."""
    async with ctx.store.transaction() as tx:
        found = await runs_page(tx, caller, agent, state, topic, limit, before)
    return page_of(found, RunOut.of)


@router.get("/runs/{run_id}")
async def show_run(run_id: Id, caller: Caller, ctx: Ctx) -> RunDetailOut:
    """One run: its state, topic, root, input and output."""
    async with ctx.store.transaction() as tx:
        return RunDetailOut.of(await run_detail(tx, await readable_run(tx, caller, run_id)))


@router.post("/runs/{run_id}/stop")
async def stop_run(run_id: Id, caller: Caller, ctx: Ctx) -> StoppedOut:
    """Cancel the turn; idempotent (stopping a run that already ended stops nothing)."""
    async with ctx.store.transaction() as tx:
        run = await readable_run(tx, caller, run_id)
        stopped = await stop_one_run(tx, ctx.clock.now(), run, f"stopped by {caller.name}")
    return StoppedOut(stopped=[r.id for r in stopped])


@router.get("/me/turns")
async def my_turns(
    caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[RunDetailOut]:
    """Turns of the human agents that are you, waiting for your answer, oldest first."""
    async with ctx.store.transaction() as tx:
        found = await turns_page(tx, caller, limit, before)
    return page_of(found, RunDetailOut.of)


@router.post("/runs/{run_id}/answer")
async def answer(run_id: Id, body: AnswerIn, caller: Caller, ctx: Ctx) -> RunOut:
    """Your answer as a human agent: it ends the turn, as a brain's reply would (and with
    ``complete``, completes the task it works on)."""
    async with ctx.store.transaction() as tx:
        run = await answer_turn(
            tx, ctx.clock, ctx.runtime.budget, caller, run_id, body.text, body.complete
        )
    return RunOut.of(run)


@router.get("/runs/{run_id}/events")
async def follow_run(run_id: Id, caller: Caller, ctx: Ctx) -> StreamingResponse:
    """Follow a run as it happens: newline-delimited JSON, while the run is open
    ``{"kind": "state", "state"}`` first (queued or running) and again when it starts,
    ``{"kind": "chunk", "text"}`` as the reply is produced, ``{"kind": "tool", "tool",
    "arguments", "result_bytes", "duration_ms", "error", "after_chars"}`` as each tool call
    ends (``arguments``: JSON, long texts shortened, secrets redacted), ``{"kind": "approval",
    "id", "tool", "arguments", "state", "decided_by", "reason", "deadline"}`` when a call asks
    first and again when it is decided,
    ``{"kind": "refusal", "text"}`` for
    each text sent from its root that was refused meanwhile (a peer's connection paused, …),
    then ``{"kind": "end", "state", "output", "cut_short", "reason", "agent", "node"}``
    (``cut_short``: the output is what a stopped or failed turn had said so far, a stopped
    turn's coming from its node just after; ``node``: the agent's node, as it is now). Clients
    skip kinds they do not know."""
    async with ctx.store.transaction() as tx:
        await readable_run(tx, caller, run_id)
    return StreamingResponse(_events(ctx, run_id), media_type="application/x-ndjson")


async def _events(ctx: Context, run_id: int) -> AsyncIterator[bytes]:
    root_id = await _root_of(ctx, run_id)
    refusals = functools.partial(ctx.runtime.topic_watch.refusals, root_id)
    async with following(ctx.store, ctx.runtime.watch, run_id, refusals) as follow:
        if follow.run.is_open:
            yield _line({"kind": "state", "state": follow.run.state.value})
        async for event in follow.events():
            if event.kind in ("tool", "approval"):
                yield _line({"kind": event.kind, **json.loads(event.text)})
            else:  # "chunk", "refusal": the text; "state": the state it moved to
                yield _line({"kind": event.kind, _TEXT_OF[event.kind]: event.text})
    run = follow.run
    yield _line(
        {
            "kind": "end",
            "state": run.state.value,
            "output": run.output,
            "cut_short": run.cut_short,
            "reason": run.reason,
            "agent": run.agent_name,
            "node": run.node_name,
        }
    )


_TEXT_OF = {"chunk": "text", "refusal": "text", "state": "state"}


async def _root_of(ctx: Context, run_id: int) -> int:
    async with ctx.store.transaction() as tx:
        run = await tx.runs.by_id(run_id)
        assert run is not None
        topic = await tx.topics.by_id(run.topic_id)
    assert topic is not None  # topics are closed, never removed
    return topic.root_id


def _line(event: dict[str, object]) -> bytes:
    return json.dumps(event).encode() + b"\n"
