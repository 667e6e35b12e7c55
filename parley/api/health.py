"""/healthz: unauthenticated, for supervisors and load balancers."""

from __future__ import annotations

from fastapi import APIRouter

from parley import __version__
from parley.api.deps import Ctx
from parley.api.schemas.health import Health

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(ctx: Ctx) -> Health:
    """Whether Parley and its store answer; no token needed."""
    async with ctx.store.transaction() as tx:
        await tx.people.count()  # proves the store answers
    return Health(status="ok", version=__version__, store=ctx.store.dialect)
