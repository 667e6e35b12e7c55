"""/healthz: unauthenticated, for supervisors and load balancers."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from parley import __version__
from parley.api.deps import Ctx
from parley.api.schemas.health import BrokerOut, Health

router = APIRouter(tags=["health"])


@router.get("/healthz", responses={503: {"model": Health}})
async def healthz(ctx: Ctx, response: Response) -> Health:
    """Whether Parley, its store and its broker answer; no token needed. 503 while the broker
    is away (the hub reconnects by itself; turns on other machines wait meanwhile)."""
    async with ctx.store.transaction() as tx:
        await tx.people.count()  # proves the store answers
    broker = ctx.broker.state()
    if not broker.connected:
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    return Health(
        status="ok" if broker.connected else "broker_away",
        version=__version__,
        store=ctx.store.dialect,
        broker=BrokerOut.of(broker),
    )
