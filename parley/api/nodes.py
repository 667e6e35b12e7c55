"""/api/v1/nodes: the mesh as the hub sees it."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.schemas import EngramIn, NodeOut
from parley.context import Context
from parley.errors import Conflict
from parley.mesh.model import Node
from parley.mesh.nodes import node_by_name, node_session_name, set_node_engram
from parley.people.accounts import require_owner

router = APIRouter(tags=["nodes"])


def _out(ctx: Context, node: Node) -> NodeOut:
    offline_after = timedelta(seconds=ctx.settings.node_offline_after_seconds)
    return NodeOut.of(node, ctx.clock.now(), offline_after, node_session_name(node.name))


@router.get("/nodes")
async def list_nodes(caller: Caller, ctx: Ctx) -> list[NodeOut]:
    async with ctx.store.transaction() as tx:
        return [_out(ctx, node) for node in await tx.nodes.all()]


@router.get("/nodes/{name}")
async def show_node(name: str, caller: Caller, ctx: Ctx) -> NodeOut:
    async with ctx.store.transaction() as tx:
        return _out(ctx, await node_by_name(tx, name))


@router.put("/nodes/{name}/engram")
async def put_engram(name: str, body: EngramIn, caller: Caller, ctx: Ctx) -> NodeOut:
    require_owner(caller, "set a node's engram")
    async with ctx.store.transaction() as tx:
        return _out(ctx, await set_node_engram(tx, name, body.engram))


@router.delete("/nodes/{name}/session", status_code=204)
async def delete_node_session(name: str, caller: Caller, ctx: Ctx) -> None:
    async with ctx.store.transaction() as tx:
        node = await node_by_name(tx, name)
    raise Conflict(
        f"node {node.name} cannot lose its node session: every node has exactly one, for as long"
        " as the node exists"
    )
