"""The pages of Parley's links outward: connections to peer installations (pause, unpause,
revoke), and channel bindings with the delivery log. Both read and act through the library
calls the API uses, so who may do what is decided once (owners: the library refuses others)."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Annotated, TypeVar
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from parley.api.ids import Id
from parley.channels.bindings import list_bindings, unbind_by_person
from parley.channels.model import BindingStatus
from parley.deliveries.listing import list_deliveries
from parley.deliveries.model import DeliveryState
from parley.durations import parse_duration
from parley.errors import Invalid
from parley.federation.a2a_agents import card_of, roles_of
from parley.federation.connections import expose, list_connections
from parley.federation.invites import accept_invite, make_invite
from parley.federation.lifecycle import pause, revoke, unpause
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, Viewer, WebParts, as_page

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])
PAGE = 50  # rows of each list on the channels page; older ones are a link away
E = TypeVar("E", bound=StrEnum)
DEFAULT_EXPIRY = "24h"  # an invite's life, as the CLI's
CONFIRM = "understood"  # the revoke form's checkbox, required by the server, not just the browser


@router.get("/connections")
async def connections_page(request: Request, viewer: Viewer, ctx: Ctx, web: WebParts) -> Response:
    async with ctx.store.transaction() as tx:
        found = await list_connections(tx, viewer.person)
    roles = {  # an A2A agent's skills, the roles our agents address
        s.connection.name: sorted(roles_of(card_of(s.connection.card)))
        for s in found
        if s.connection.card
    }
    return web.pages.page(request, "connections.html", viewer, connections=found, roles=roles)


@router.post("/connections/invite")
async def invite_peer(request: Request, posted: Post, ctx: Ctx, web: WebParts) -> Response:
    """The code on this answer only (the page is ``no-store``): only its hash is kept."""
    name = posted.form.required("name", "name")
    expires = parse_duration(posted.form.get("expires").strip() or DEFAULT_EXPIRY, "expires")
    async with ctx.store.transaction() as tx:
        made = await make_invite(
            tx, ctx.clock, posted.viewer.person, name, expires, ctx.settings.base_url
        )
    return web.pages.page(request, "connection_invite.html", posted.viewer, 201, made=made)


@router.post("/connections/accept")
async def accept_peer(posted: Post, ctx: Ctx) -> Response:
    code = posted.form.required("code", "invite code")
    name = posted.form.required("name", "name")
    status = await accept_invite(
        ctx.store, ctx.clock, ctx.runtime.peers, ctx.settings.base_url, posted.viewer.person,
        code.strip(), name,
    )  # fmt: skip
    return back_to("/connections", f"Connected to {status.connection.name}.")


@router.post("/connections/{name}/expose")
async def expose_to_peer(name: str, posted: Post, ctx: Ctx) -> Response:
    """Exactly the agents named (the same rule as ``parley connection expose``)."""
    agents = [a.strip() for a in posted.form.get("agents").split(",") if a.strip()]
    async with ctx.store.transaction() as tx:
        status = await expose(tx, posted.viewer.person, name, agents)
    shown = ", ".join(status.exposed) or "no agent"
    return back_to("/connections", f"{name} may address {shown}.")


@router.post("/connections/{name}/pause")
async def pause_connection(name: str, posted: Post, ctx: Ctx) -> Response:
    async with ctx.store.transaction() as tx:
        status = await pause(tx, ctx.clock, posted.viewer.person, name)
    return back_to("/connections", f"The connection {name} is {status.connection.state.value}.")


@router.post("/connections/{name}/unpause")
async def unpause_connection(name: str, posted: Post, ctx: Ctx) -> Response:
    async with ctx.store.transaction() as tx:
        status = await unpause(tx, posted.viewer.person, name)
    return back_to("/connections", f"The connection {name} is {status.connection.state.value}.")


@router.post("/connections/{name}/revoke")
async def revoke_connection(name: str, posted: Post, ctx: Ctx) -> Response:
    # A revoke is for good: a click that slipped (or a script without the box) does nothing.
    if posted.form.get("confirm") != CONFIRM:
        raise Invalid("tick “I understand revoking is permanent” to revoke", field="confirm")
    async with ctx.store.transaction() as tx:
        await revoke(tx, ctx.clock, posted.viewer.person, name)
    return back_to("/connections", f"The connection {name} is revoked for good.")


@router.get("/channels")
async def channels_page(
    request: Request,
    viewer: Viewer,
    ctx: Ctx,
    web: WebParts,
    status: Annotated[list[str] | None, Query()] = None,
    state: Annotated[list[str] | None, Query()] = None,
    bindings_before: Annotated[str | None, Query()] = None,
    deliveries_before: Annotated[str | None, Query()] = None,
) -> Response:
    statuses = _chosen(BindingStatus, status, "status")
    states = _chosen(DeliveryState, state, "state")
    async with ctx.store.transaction() as tx:
        bindings = await list_bindings(
            tx, viewer.person, statuses, limit=PAGE, before=bindings_before or None
        )
        deliveries = await list_deliveries(
            tx, viewer.person, states, PAGE, deliveries_before or None
        )
        accounts = await tx.channels.accounts()
    live = ctx.runtime.channels.states
    filters = [("status", s.value) for s in statuses] + [("state", s.value) for s in states]
    return web.pages.page(
        request,
        "channels.html",
        viewer,
        accounts=[(a, live.of(a.channel, a.account_id)) for a in accounts],
        bindings=bindings,
        deliveries=deliveries,
        statuses=[s.value for s in statuses],
        states=[s.value for s in states],
        all_statuses=[s.value for s in BindingStatus],
        all_states=[s.value for s in DeliveryState],
        older_bindings=_older(filters, "bindings_before", bindings.next),
        older_deliveries=_older(filters, "deliveries_before", deliveries.next),
        span=span,
    )


@router.post("/bindings/{binding_id}/unbind")
async def unbind(binding_id: Id, posted: Post, ctx: Ctx) -> Response:
    person = posted.viewer.person
    reason = posted.form.get("reason").strip() or f"unbound by {person.name}"
    async with ctx.store.transaction() as tx:
        ended = await unbind_by_person(tx, ctx.clock, person, reason, binding_id=binding_id)
    said = f"Binding {binding_id} ended." if ended else f"Binding {binding_id} had ended already."
    return back_to("/channels", said)


def _chosen(kind: type[E], given: list[str] | None, field: str) -> list[E]:
    """A filter's values; the form's "all" is an empty one, so blanks are skipped."""
    try:
        return [kind(value) for value in given or [] if value]
    except ValueError as exc:
        known = ", ".join(kind)
        raise Invalid(f"{field}: give one of {known}", field=field) from exc


def _older(filters: list[tuple[str, str]], cursor: str, after: str | None) -> str | None:
    """The link to a list's next page, keeping the filters (the other list starts over)."""
    return None if after is None else "/channels?" + urlencode([*filters, (cursor, after)])


def span(value: timedelta | None) -> str:
    """A binding's timeout in words a person reads at a glance: 90m, 2h, 1d 6h."""
    if value is None:
        return ""
    minutes = int(value.total_seconds()) // 60
    days, hours, mins = minutes // 1440, minutes // 60 % 24, minutes % 60
    parts = [f"{days}d"] * bool(days) + [f"{hours}h"] * bool(hours) + [f"{mins}m"] * bool(mins)
    return " ".join(parts) or f"{int(value.total_seconds())}s"
