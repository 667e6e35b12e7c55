"""The A2A page (owners): the agents exposed over A2A, with their cards' URLs (expose, hide),
and the A2A clients (add — its token shown on the answer only, once — and remove). It acts
through the library calls the API uses, so who may do what is decided once. Its path is not
under /a2a/, which is A2A's own."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from parley.a2a.clients import add_client, clients, expose, exposed, hide, remove_client
from parley.a2a.edge import CARD_PATH, agent_url
from parley.errors import Invalid, NotFound
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, Viewer, WebParts, as_page

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])
PAGE = "/a2a-access"
CONFIRM = "understood"  # the remove form's checkbox: a removed client's token never works again


@router.get(PAGE)
async def a2a_page(request: Request, viewer: Viewer, ctx: Ctx, web: WebParts) -> Response:
    async with ctx.store.transaction() as tx:
        found = await clients(tx, viewer.person)  # owners only: the library refuses others
        agents = await exposed(tx, viewer.person)
    base = ctx.settings.base_url
    cards = {agent.name: agent_url(base, agent.name) + CARD_PATH for agent in agents}
    return web.pages.page(request, "a2a.html", viewer, clients=found, agents=agents, cards=cards)


@router.post(PAGE + "/expose")
async def expose_agent(posted: Post, ctx: Ctx) -> Response:
    name = posted.form.required("agent", "agent")
    async with ctx.store.transaction() as tx:
        made = await expose(tx, ctx.clock, posted.viewer.person, name)
    card = agent_url(ctx.settings.base_url, made.name) + CARD_PATH
    return back_to(PAGE, f"{made.name} is exposed over A2A: its card is at {card}.")


@router.post(PAGE + "/agents/{agent}/hide")
async def hide_agent(agent: str, posted: Post, ctx: Ctx) -> Response:
    async with ctx.store.transaction() as tx:
        if not await hide(tx, posted.viewer.person, agent):
            raise NotFound(f"{agent} is not exposed over A2A", field="agent")
    return back_to(PAGE, f"{agent} is no longer reachable over A2A.")


@router.post(PAGE + "/clients")
async def add(request: Request, posted: Post, ctx: Ctx, web: WebParts) -> Response:
    """The token on this answer only: no redirect that would carry it (the page is
    ``no-store``); only its hash is kept."""
    name = posted.form.required("name", "name")
    async with ctx.store.transaction() as tx:
        made = await add_client(tx, ctx.clock, posted.viewer.person, name)
    return web.pages.page(request, "a2a_token.html", posted.viewer, 201, new=made)


@router.post(PAGE + "/clients/{name}/remove")
async def remove(name: str, posted: Post, ctx: Ctx) -> Response:
    if posted.form.get("confirm") != CONFIRM:
        raise Invalid("tick “I understand its token stops for good” to remove", field="confirm")
    async with ctx.store.transaction() as tx:
        await remove_client(tx, ctx.clock, posted.viewer.person, name)
    return back_to(PAGE, f"The A2A client {name} is removed: its token no longer works.")
