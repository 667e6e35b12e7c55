"""/api/v1/nodes: the mesh as the hub sees it."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.base import Page, page_of
from parley.api.schemas.health import BrokerOut
from parley.api.schemas.nodes import CredentialsIn, CredentialsOut, EngramIn, NodeOut
from parley.api.schemas.topics import MessageOut, QueuedOut, TextIn
from parley.context import Context
from parley.conversations.node_exchange import ask_node
from parley.datafolder import DataFolder
from parley.errors import Conflict
from parley.mesh.broker_auth import BrokerKeys
from parley.mesh.credentials import broker_revoker, issue_credentials, revoke_credentials
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


@router.post("/nodes/{name}/credentials", status_code=201)
async def issue_node_credentials(
    name: str, body: CredentialsIn, caller: Caller, ctx: Ctx
) -> CredentialsOut:
    """Issue the broker credentials a machine joins the mesh with as node NAME (owners); the
    .creds text is in this answer only (the hub keeps its public key). A name with live
    credentials is refused unless ``replace``, which revokes them first (the node holding them
    is offline at once, its running turns lost, until it joins with the new); the hub's own node's
    name never has any; the hub's broker keys must exist (``parley mesh broker-config``)."""
    require_owner(caller, "issue a node's credentials")
    settings = ctx.settings
    kept, issued = await issue_credentials(
        ctx.store,
        ctx.clock,
        BrokerKeys.load(DataFolder(settings.data_dir)),
        settings.node_name,
        name,
        body.replace,
        broker_revoker(settings),
    )
    if body.replace:  # the machine that held the old ones is cut off: gone, as if removed
        await ctx.registry.remove(name)
    return CredentialsOut(
        node=name, public_key=kept.public_key, issued_at=kept.issued_at, creds=issued.creds
    )


@router.delete("/nodes/{name}/credentials", status_code=204)
async def remove_node_credentials(name: str, caller: Caller, ctx: Ctx) -> None:
    """Revoke node NAME's credentials (owners): the broker drops its connection, the node is
    offline at once (its running turns end as a lost node's), and the name may be issued
    again."""
    require_owner(caller, "revoke a node's credentials")
    settings = ctx.settings
    await revoke_credentials(
        ctx.store, ctx.clock, settings.node_name, name, broker_revoker(settings)
    )
    await ctx.registry.remove(name)
