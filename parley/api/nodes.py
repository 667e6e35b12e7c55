"""/api/v1/nodes: the mesh as the hub sees it."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.base import Page, page_of
from parley.api.schemas.health import BrokerOut
from parley.api.schemas.nodes import EngramIn, NodeOut
from parley.api.schemas.topics import MessageOut, QueuedOut, TextIn
from parley.context import Context
from parley.conversations.node_exchange import ask_node
from parley.errors import Conflict
from parley.mesh.model import Node, Workload
from parley.mesh.nodes import node_by_name, node_session_name, set_node_engram
from parley.people.accounts import require_owner
from parley.reads.directory import exchanges_page, nodes_page
from parley.store import Tx

router = APIRouter(tags=["nodes"])


def _out(ctx: Context, node: Node, load: Workload) -> NodeOut:
    offline_after = timedelta(seconds=ctx.settings.node_offline_after_seconds)
    return NodeOut.of(node, ctx.clock.now(), offline_after, node_session_name(node.name), load)


async def _shown(tx: Tx, ctx: Context, node: Node) -> NodeOut:
    loads = await tx.nodes.workloads([node.id])
    return _out(ctx, node, loads.get(node.id, Workload()))


@router.get("/nodes")
async def list_nodes(
    caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[NodeOut]:
    """Nodes by name."""
    async with ctx.store.transaction() as tx:
        found = await nodes_page(tx, limit, before)
        loads = await tx.nodes.workloads([node.id for node in found.items])
    return page_of(found, lambda node: _out(ctx, node, loads.get(node.id, Workload())))


@router.get("/mesh/broker")
async def mesh_broker(caller: Caller, ctx: Ctx) -> BrokerOut:
    """The broker between the hub and its nodes, as the hub sees it now: while it is away,
    nodes on other machines cannot be reached (the hub reconnects by itself)."""
    return BrokerOut.of(ctx.broker.state())


@router.get("/nodes/{name}")
async def show_node(name: str, caller: Caller, ctx: Ctx) -> NodeOut:
    """One node: its status, last heartbeat and engram."""
    async with ctx.store.transaction() as tx:
        return await _shown(tx, ctx, await node_by_name(tx, name))


@router.put("/nodes/{name}/engram")
async def put_engram(name: str, body: EngramIn, caller: Caller, ctx: Ctx) -> NodeOut:
    """Set a node's engram, the system prompt of its node session (owners)."""
    require_owner(caller, "set a node's engram")
    async with ctx.store.transaction() as tx:
        return await _shown(tx, ctx, await set_node_engram(tx, name, body.engram))


@router.post("/nodes/{name}/ask", status_code=202)
async def ask(name: str, body: TextIn, caller: Caller, ctx: Ctx) -> QueuedOut:
    """Ask the node's own session; callers queue, it answers one at a time."""
    async with ctx.store.transaction() as tx:
        queued = await ask_node(tx, ctx.clock, name, body.text, caller)
    return QueuedOut.of(queued)


@router.get("/nodes/{name}/exchanges")
async def exchanges(
    name: str, caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[MessageOut]:
    """Everything the node session was asked, by whom, and what it answered; newest first."""
    async with ctx.store.transaction() as tx:
        found = await exchanges_page(tx, caller, name, limit, before)
    return page_of(found, MessageOut.of)


@router.delete("/nodes/{name}/session", status_code=204)
async def delete_node_session(name: str, caller: Caller, ctx: Ctx) -> None:
    """A node session cannot be deleted: every node keeps its one, always."""
    async with ctx.store.transaction() as tx:
        node = await node_by_name(tx, name)
    raise Conflict(
        f"node {node.name} cannot lose its node session: every node has exactly one, for as long"
        " as the node exists"
    )
