"""/api/v1/bindings: channel conversations bound to sessions (owners)."""

from __future__ import annotations

from fastapi import APIRouter, Query

from parley.api.deps import Caller, Ctx
from parley.api.ids import Id
from parley.api.schemas.base import Page
from parley.api.schemas.bindings import BindIn, BindingOut, UnbindIn
from parley.channels.bindings import (
    SessionBindingService,
    bind_by_person,
    list_bindings,
    unbind_by_person,
)
from parley.channels.model import BindingStatus
from parley.deliveries.listing import MAX_PAGE
from parley.people.accounts import require_owner

router = APIRouter(tags=["bindings"])


@router.get("/bindings")
async def bindings(
    caller: Caller,
    ctx: Ctx,
    status: list[BindingStatus] | None = Query(None, description="only bindings in these"),
    session: str | None = Query(None, description="only this session's (topic:ID)"),
    limit: int = Query(100, ge=1, le=MAX_PAGE),
    before: str | None = Query(None, description="the `next` of the previous page"),
) -> Page[BindingOut]:
    """Bindings (owners), newest first: session, conversation, status, who bound it, why it
    ended."""
    async with ctx.store.transaction() as tx:
        page = await list_bindings(tx, caller, status or [], session, limit, before)
    return Page(items=[BindingOut.of(item) for item in page.items], next=page.next)


@router.get("/bindings/{binding_id}")
async def show(binding_id: Id, caller: Caller, ctx: Ctx) -> BindingOut:
    """One binding (owners)."""
    require_owner(caller, "read the bindings")
    async with ctx.store.transaction() as tx:
        return BindingOut.of(await SessionBindingService(tx, ctx.clock).by_id(binding_id))


@router.post("/bindings", status_code=201)
async def bind(body: BindIn, caller: Caller, ctx: Ctx) -> BindingOut:
    """Bind a channel conversation to a session (owners): its messages go to that session,
    and that session's completions come back to it. Only a session the caller and every person
    of the conversation may read: one the caller may not read is 404, as one that does not
    exist; one a person there may not read, 403."""
    async with ctx.store.transaction() as tx:
        record = await bind_by_person(
            tx, ctx.clock, caller, body.session, body.conversation(), body.lifetimes(),
            body.metadata, ctx.runtime.channels.registry,
        )  # fmt: skip
    return BindingOut.of(record)


@router.post("/bindings/unbind")
async def unbind(body: UnbindIn, caller: Caller, ctx: Ctx) -> list[BindingOut]:
    """End a binding, or every binding of a session (owners), with a reason; the ones ended."""
    async with ctx.store.transaction() as tx:
        ended = await unbind_by_person(
            tx, ctx.clock, caller, body.reason, binding_id=body.binding, session=body.session
        )
    return [BindingOut.of(record) for record in ended]
