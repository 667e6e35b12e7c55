"""/api/v1 approvals: what waits for your yes or no (``/me/approvals``), deciding it; and, under
a running turn's token, asking first and waiting for the decision (``/act/approvals``)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Query

from parley.api.actions import RunToken
from parley.api.deps import Caller, Ctx
from parley.api.ids import Id
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.approvals import ApprovalOut, AskedOut, AskIn, DenyIn
from parley.api.schemas.base import Page, page_of
from parley.channels.approvals import decide
from parley.errors import NotFound
from parley.hub.actions import running_run
from parley.hub.approvals import WAIT_SECONDS, ask_for_token, decision
from parley.reads.approvals import waiting_page

router = APIRouter(tags=["approvals"])


@router.get("/me/approvals")
async def my_approvals(
    caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[ApprovalOut]:
    """Tool calls waiting for your approval, oldest first: of the conversations and tasks that
    are yours, and, for an owner, every one."""
    async with ctx.store.transaction() as tx:
        found = await waiting_page(tx, caller, ctx.clock.now(), limit, before)
    return page_of(found, ApprovalOut.of)


@router.get("/approvals/{approval_id}")
async def show_approval(approval_id: Id, caller: Caller, ctx: Ctx) -> ApprovalOut:
    """One approval you may decide, however it stands."""
    async with ctx.store.transaction() as tx:
        approval = await tx.approvals.by_id(approval_id)
        if approval is None or not await tx.approvals.may_decide(caller, approval_id):
            raise NotFound(f"no approval {approval_id}")
    return ApprovalOut.of(approval)


@router.post("/approvals/{approval_id}/approve")
async def approve(approval_id: Id, caller: Caller, ctx: Ctx) -> ApprovalOut:
    """Let the call act: its turn goes on with its result."""
    async with ctx.store.transaction() as tx:
        return ApprovalOut.of(await decide(tx, ctx.clock, caller, approval_id, True))


@router.post("/approvals/{approval_id}/deny")
async def deny(approval_id: Id, body: DenyIn, caller: Caller, ctx: Ctx) -> ApprovalOut:
    """Refuse the call: its turn goes on, the model reading the denial (and your reason) as
    the call's result. To end the turn instead, stop its run."""
    async with ctx.store.transaction() as tx:
        decided = await decide(tx, ctx.clock, caller, approval_id, False, body.reason)
    return ApprovalOut.of(decided)


@router.post("/act/approvals", status_code=201)
async def ask_first(body: AskIn, token: RunToken, ctx: Ctx) -> AskedOut:
    """This running turn asks before a call of a tool on its agent's ask list (its node does)."""
    timeout = timedelta(seconds=ctx.settings.approval_timeout_seconds)
    asked = await ask_for_token(ctx.store, ctx.clock, token, body.tool, body.arguments, timeout)
    return AskedOut.of(asked)


@router.get("/act/approvals/{approval_id}")
async def wait_for_decision(
    approval_id: Id,
    token: RunToken,
    ctx: Ctx,
    wait: float = Query(0.0, ge=0.0, le=WAIT_SECONDS, description="seconds to wait for news"),
) -> AskedOut:
    """How this turn's approval stands, once decided or after ``wait`` seconds."""
    async with ctx.store.transaction() as tx:
        run = await running_run(tx, token)
        approval = await tx.approvals.by_id(approval_id)
    if approval is None or approval.run_id != run.id:
        raise NotFound(f"this turn asked no approval {approval_id}")
    waited = await decision(ctx.store, ctx.clock, ctx.runtime.watch, approval_id, run.id, wait)
    return AskedOut.of(waited)
