"""/api/v1/a2a: who may reach this installation's agents over A2A (owners): clients, each with
a token, and the agents exposed to them."""

from __future__ import annotations

from fastapi import APIRouter

from parley.a2a.clients import add_client, clients, expose, exposed, hide, remove_client
from parley.api.deps import Caller, Ctx
from parley.api.schemas.a2a import (
    A2AClientIn,
    A2AClientOut,
    ExposeA2AIn,
    ExposedOut,
    NewA2AClientOut,
)
from parley.api.schemas.base import Page
from parley.errors import NotFound

router = APIRouter(tags=["a2a"])


@router.post("/a2a/clients", status_code=201)
async def add(body: A2AClientIn, caller: Caller, ctx: Ctx) -> NewA2AClientOut:
    """Let an A2A client in (owners): its token, shown this once, reaches every exposed agent."""
    async with ctx.store.transaction() as tx:
        return NewA2AClientOut.made(await add_client(tx, ctx.clock, caller, body.name))


@router.get("/a2a/clients")
async def listed(caller: Caller, ctx: Ctx) -> Page[A2AClientOut]:
    """A2A clients by name, removed ones too (owners)."""
    async with ctx.store.transaction() as tx:
        found = await clients(tx, caller)
    return Page(items=[A2AClientOut.of(client) for client in found], next=None)


@router.delete("/a2a/clients/{name}")
async def remove(name: str, caller: Caller, ctx: Ctx) -> A2AClientOut:
    """Remove an A2A client (owners): its token answers 401 at once, its contexts close and
    their turns stop; their history stays. Removing it again changes nothing."""
    async with ctx.store.transaction() as tx:
        return A2AClientOut.of(await remove_client(tx, ctx.clock, caller, name))


@router.post("/a2a/agents", status_code=201)
async def expose_agent(body: ExposeA2AIn, caller: Caller, ctx: Ctx) -> ExposedOut:
    """Expose an agent over A2A (owners): its card and endpoints answer at /a2a/AGENT/."""
    async with ctx.store.transaction() as tx:
        made = await expose(tx, ctx.clock, caller, body.agent)
    return ExposedOut.of(made, ctx.settings.base_url)


@router.get("/a2a/agents")
async def exposed_agents(caller: Caller, ctx: Ctx) -> Page[ExposedOut]:
    """The agents exposed over A2A (owners)."""
    async with ctx.store.transaction() as tx:
        found = await exposed(tx, caller)
    return Page(items=[ExposedOut.of(each, ctx.settings.base_url) for each in found], next=None)


@router.delete("/a2a/agents/{agent}", status_code=204)
async def hide_agent(agent: str, caller: Caller, ctx: Ctx) -> None:
    """Hide an agent from A2A (owners): its card and endpoints answer 404; its contexts'
    history stays, and exposing it again gives it back to its clients."""
    async with ctx.store.transaction() as tx:
        if not await hide(tx, caller, agent):
            raise NotFound(f"{agent} is not exposed over A2A", field="agent")
