"""/api/v1/connections: links to peer installations — invite, accept, list, expose, pause,
unpause, revoke, queue limit (owners)."""

from __future__ import annotations

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.schemas.base import Page
from parley.api.schemas.connections import (
    A2AConnectionIn,
    AcceptIn,
    ConnectionOut,
    ExposeIn,
    InviteIn,
    InviteOut,
    QueueLimitIn,
)
from parley.durations import parse_duration
from parley.federation.a2a_connections import add_a2a
from parley.federation.connections import expose, list_connections
from parley.federation.invites import accept_invite, make_invite
from parley.federation.lifecycle import pause, revoke, set_queue_limit, unpause

router = APIRouter(tags=["connections"])


@router.post("/connections/invites", status_code=201)
async def invite(body: InviteIn, caller: Caller, ctx: Ctx) -> InviteOut:
    """Make an invite code for a peer installation's owner (owners); good once, until it
    expires."""
    expires = parse_duration(body.expires, "expires")
    async with ctx.store.transaction() as tx:
        made = await make_invite(tx, ctx.clock, caller, body.name, expires, ctx.settings.base_url)
    return InviteOut(name=made.invite.name, code=str(made.code), expires_at=made.invite.expires_at)


@router.post("/connections", status_code=201)
async def accept(body: AcceptIn, caller: Caller, ctx: Ctx) -> ConnectionOut:
    """Accept a peer's invite code (owners): both sides then hold a connection."""
    status = await accept_invite(
        ctx.store,
        ctx.clock,
        ctx.runtime.peers,
        ctx.settings.base_url,
        caller,
        body.code,
        body.name,
    )
    return ConnectionOut.of(status)


@router.post("/connections/a2a", status_code=201)
async def add_a2a_agent(body: A2AConnectionIn, caller: Caller, ctx: Ctx) -> ConnectionOut:
    """Add an A2A agent as a connection (owners): its card is read now; its skills become the
    roles our agents address (ROLE@NAME)."""
    status = await add_a2a(
        ctx.store, ctx.clock, ctx.runtime.a2a_agents, caller, body.name, body.url, body.token
    )
    return ConnectionOut.of(status)


@router.get("/connections")
async def connections(caller: Caller, ctx: Ctx) -> Page[ConnectionOut]:
    """Connections by name (owners): state, queue, last contact, backoff, exposed agents."""
    async with ctx.store.transaction() as tx:
        found = await list_connections(tx, caller)
    return Page(items=[ConnectionOut.of(status) for status in found], next=None)


@router.put("/connections/{name}/exposed")
async def set_exposed(name: str, body: ExposeIn, caller: Caller, ctx: Ctx) -> ConnectionOut:
    """Choose which local agents the peer may address (owners): exactly these, from now on."""
    async with ctx.store.transaction() as tx:
        status = await expose(tx, caller, name, body.agents)
    return ConnectionOut.of(status)


@router.post("/connections/{name}/pause")
async def pause_connection(name: str, caller: Caller, ctx: Ctx) -> ConnectionOut:
    """Pause a connection on this side (owners): its runs stop, what waits to be sent fails,
    nothing is sent on it and the peer's text is refused until it is unpaused."""
    async with ctx.store.transaction() as tx:
        status = await pause(tx, ctx.clock, caller, name)
    return ConnectionOut.of(status)


@router.post("/connections/{name}/unpause")
async def unpause_connection(name: str, caller: Caller, ctx: Ctx) -> ConnectionOut:
    """Unpause a connection (owners): text is sent and taken again; nothing restarts."""
    async with ctx.store.transaction() as tx:
        status = await unpause(tx, caller, name)
    return ConnectionOut.of(status)


@router.post("/connections/{name}/revoke")
async def revoke_connection(name: str, caller: Caller, ctx: Ctx) -> ConnectionOut:
    """Revoke a connection for good (owners): both tokens die, its conversations close."""
    async with ctx.store.transaction() as tx:
        status = await revoke(tx, ctx.clock, caller, name)
    return ConnectionOut.of(status)


@router.put("/connections/{name}/queue-limit")
async def put_queue_limit(name: str, body: QueueLimitIn, caller: Caller, ctx: Ctx) -> ConnectionOut:
    """Set how much text may wait on a connection, each way (owners); null: the default."""
    async with ctx.store.transaction() as tx:
        status = await set_queue_limit(tx, caller, name, body.queue_limit)
    return ConnectionOut.of(status)
