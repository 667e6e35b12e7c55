"""Reading the people and the nodes of this installation (every person reads them), and what
a node session was asked."""

from __future__ import annotations

from parley.conversations.model import Message
from parley.mesh.model import Node
from parley.mesh.nodes import node_by_name
from parley.people.model import Person
from parley.reads import cursors
from parley.reads.model import Page
from parley.reads.topics import messages_page
from parley.store import Tx


async def people_page(tx: Tx, limit: int | None = None, before: str | None = None) -> Page[Person]:
    """People by name."""
    window = cursors.window(cursors.PEOPLE, limit, before)
    return cursors.page(cursors.PEOPLE, await tx.people.page(window))


async def nodes_page(tx: Tx, limit: int | None = None, before: str | None = None) -> Page[Node]:
    """Nodes by name."""
    window = cursors.window(cursors.NODES, limit, before)
    return cursors.page(cursors.NODES, await tx.nodes.page(window))


async def exchanges_page(
    tx: Tx, reader: Person, node: str, limit: int | None = None, before: str | None = None
) -> Page[Message]:
    """Everything a node session was asked, by whom, and what it answered: the messages of the
    node's own topic, newest first (none before it was first asked)."""
    found = await node_by_name(tx, node)
    topic = await tx.topics.node_topic(found.session_agent_id)
    if topic is None:
        cursors.window(cursors.MESSAGES, limit, before)  # a bad limit or cursor is still refused
        return Page([], None)
    return await messages_page(tx, reader, topic.id, limit, before)
