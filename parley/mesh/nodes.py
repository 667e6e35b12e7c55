"""Nodes as the hub knows them: registration (with the node session), listing, engrams."""

from __future__ import annotations

from parley.clock import Clock
from parley.errors import Invalid, NotFound
from parley.mesh.model import Node
from parley.naming import check_name
from parley.store import Tx
from parley.text import MAX_ENGRAM


def node_session_name(node: str) -> str:
    """The node session's name: the ':' keeps it apart from every hireable agent name."""
    return f"node:{node}"


async def register_node(
    tx: Tx, clock: Clock, name: str, hostname: str, workspace_root: str
) -> Node:
    """First registration creates the node with its one node session; later ones refresh it."""
    check_name("node", name)
    now = clock.now()
    if await tx.nodes.by_name(name) is None:
        return await tx.nodes.create_with_session(
            name, node_session_name(name), hostname, workspace_root, now
        )
    await tx.nodes.record_registration(name, hostname, workspace_root, now)
    return await node_by_name(tx, name)


async def node_by_name(tx: Tx, name: str) -> Node:
    node = await tx.nodes.by_name(name)
    if node is None:
        raise NotFound(f"no node named {name!r}", field="node")
    return node


def check_engram(engram: str) -> str:
    if len(engram) > MAX_ENGRAM:
        raise Invalid(
            f"an engram holds at most {MAX_ENGRAM} characters, this one has {len(engram)}",
            field="engram",
        )
    return engram


async def set_node_engram(tx: Tx, name: str, engram: str) -> Node:
    check_engram(engram)
    if not await tx.nodes.set_engram(name, engram):
        raise NotFound(f"no node named {name!r}", field="node")
    return await node_by_name(tx, name)
