"""/api/v1/deliveries: the outbox, for owners — what waits, what arrived, what never will."""

from __future__ import annotations

from fastapi import APIRouter, Query

from parley.api.deps import Caller, Ctx
from parley.api.schemas.base import Page
from parley.api.schemas.deliveries import DeliveryOut
from parley.deliveries.listing import MAX_PAGE, list_deliveries
from parley.deliveries.model import DeliveryState

router = APIRouter(tags=["deliveries"])


@router.get("/deliveries")
async def deliveries(
    caller: Caller,
    ctx: Ctx,
    state: list[DeliveryState] | None = Query(None, description="only items in these states"),
    limit: int = Query(100, ge=1, le=MAX_PAGE),
    before: str | None = Query(None, description="the `next` of the previous page"),
) -> Page[DeliveryOut]:
    """The outbox (owners), newest first: key, kind, state, attempts, next attempt, last
    error."""
    async with ctx.store.transaction() as tx:
        page = await list_deliveries(tx, caller, state or [], limit, before)
    return Page(items=[DeliveryOut.of(item) for item in page.items], next=page.next)
