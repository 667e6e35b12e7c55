"""/federation/v1: what peer installations call — the handshake (with an invite's secret) and
batches of frames (with the token this side issued them, checked before the body is read)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from parley.api.deps import Ctx
from parley.api.schemas.federation import Batch, HandshakeIn, HandshakeOut
from parley.errors import Invalid, Unauthorized
from parley.federation.frames import Verdicts
from parley.federation.invites import answer_handshake
from parley.federation.model import Connection
from parley.federation.receiver import receive_batch

router = APIRouter(prefix="/federation/v1", tags=["federation"])


@router.post("/handshake")
async def handshake(body: HandshakeIn, ctx: Ctx) -> HandshakeOut:
    """Complete an invite: the acceptor offers its token and gets ours (the secret is spent)."""
    async with ctx.store.transaction() as tx:
        token = await answer_handshake(tx, ctx.clock, body.secret, body.url, body.token)
    return HandshakeOut(token=token)


@router.post("/frames")
async def frames(body: Batch, request: Request, ctx: Ctx) -> Verdicts:
    """Apply a batch of frames from the peer: one verdict per frame, in frame order; a batch
    that is not valid as a whole changes nothing."""
    connection = getattr(request.state, "peer", None)
    if not isinstance(connection, Connection):
        raise Unauthorized("this route needs a peer's token")
    limit = ctx.settings.federation_max_frames
    if len(body.frames) > limit:
        raise Invalid(f"a batch holds at most {limit} frames; this one has {len(body.frames)}")
    default_limit = ctx.settings.federation_queue_limit
    verdicts = await receive_batch(
        ctx.store, ctx.clock, connection, body.frames, default_limit, ctx.runtime.backlogs
    )
    return Verdicts(verdicts=verdicts)
