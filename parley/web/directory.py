"""The nodes and people pages: the mesh with what each node holds, asking a node's own session,
the people of this installation, and their tokens (each shown once, on the answer's page:
never in a URL, never after a redirect)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from parley.conversations.node_exchange import ask_node
from parley.errors import Invalid
from parley.mesh.model import Node, NodeStatus, Workload
from parley.mesh.nodes import node_by_name, node_session_name
from parley.people.accounts import NewPerson, add_person_by, reissue_token, require_owner
from parley.people.model import Role
from parley.reads.directory import exchanges_page, nodes_page, people_page
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, Posted, Viewer, Web, WebParts, as_page

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])


@dataclass(frozen=True)
class Shown:
    """A node as a row of the list, as the API shows it (``api/nodes._out``)."""

    node: Node
    status: NodeStatus
    session: str
    load: Workload


@router.get("/nodes")
async def nodes_list(
    request: Request, viewer: Viewer, ctx: Ctx, web: WebParts, before: str | None = None
) -> Response:
    offline_after = timedelta(seconds=ctx.settings.node_offline_after_seconds)
    now = ctx.clock.now()
    async with ctx.store.transaction() as tx:
        found = await nodes_page(tx, before=before)
        loads = await tx.nodes.workloads([node.id for node in found.items])
    rows = [
        Shown(
            node,
            node.status(now, offline_after),
            node_session_name(node.name),
            loads.get(node.id, Workload()),
        )
        for node in found.items
    ]
    return web.pages.page(request, "nodes.html", viewer, rows=rows, page=found, exchanges=None)


@router.get("/nodes/{name}/exchanges")
async def node_exchanges(
    name: str,
    request: Request,
    viewer: Viewer,
    ctx: Ctx,
    web: WebParts,
    before: str | None = None,
) -> Response:
    async with ctx.store.transaction() as tx:
        node = await node_by_name(tx, name)
        found = await exchanges_page(tx, viewer.person, node.name, before=before)
    return web.pages.page(
        request,
        "nodes.html",
        viewer,
        rows=[],
        page=found,
        exchanges=found,
        node=node.name,
        engram=node.engram,
    )


@router.post("/nodes/{name}/ask")
async def node_ask(name: str, posted: Post, ctx: Ctx) -> Response:
    async with ctx.store.transaction() as tx:
        await ask_node(tx, ctx.clock, name, posted.form.get("text"), posted.viewer.person)
    said = f"Asked node {name}; its answer comes in its exchanges."
    return back_to(f"/nodes/{name}/exchanges", said)


@router.get("/people")
async def people_list(
    request: Request, viewer: Viewer, ctx: Ctx, web: WebParts, before: str | None = None
) -> Response:
    async with ctx.store.transaction() as tx:
        found = await people_page(tx, before=before)
    roles = [role.value for role in Role]
    return web.pages.page(request, "people.html", viewer, page=found, roles=roles)


@router.post("/people")
async def people_add(request: Request, posted: Post, ctx: Ctx, web: WebParts) -> Response:
    require_owner(posted.viewer.person, "add people")  # before the form's own faults
    name = posted.form.required("name", "name")
    role = _role(posted.form.get("role", Role.MEMBER.value))
    async with ctx.store.transaction() as tx:
        created = await add_person_by(tx, ctx.clock, posted.viewer.person, name, role)
    return _token_page(request, posted, web, created, 201, "added")


@router.post("/people/{name}/token")
async def people_reissue(
    name: str, request: Request, posted: Post, ctx: Ctx, web: WebParts
) -> Response:
    async with ctx.store.transaction() as tx:
        issued = await reissue_token(tx, name, posted.viewer.person)
    return _token_page(request, posted, web, issued, 200, "reissued")


def _token_page(
    request: Request, posted: Posted, web: Web, new: NewPerson, status: int, done: str
) -> Response:
    """The token on this answer only: no redirect that would carry it, and not cached (the
    page is ``no-store``); only its hash is kept."""
    yours = new.person.name == posted.viewer.person.name
    return web.pages.page(
        request, "token.html", posted.viewer, status, new=new, done=done, yours=yours
    )


def _role(value: str) -> Role:
    try:
        return Role(value)
    except ValueError:
        known = ", ".join(role.value for role in Role)
        raise Invalid(f"role is one of {known}, not {value!r}", field="role") from None
