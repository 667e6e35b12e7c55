"""A topic in full (its text, runs, subtasks and agent conversations, each a first page that
continues on its own list), and the history between two roles."""

from __future__ import annotations

from parley.agents.lookup import agent_by_name
from parley.conversations.model import LOCAL, Topic, pair_key, peer_pair_key
from parley.people.model import Person
from parley.reads.model import Page, TopicDetail
from parley.reads.runs import runs_page
from parley.reads.topics import (
    agent_conversations_page,
    messages_page,
    tasks_page,
    views,
)
from parley.store import Tx


async def topic_detail(tx: Tx, reader: Person, topic: Topic) -> TopicDetail:
    """``topic`` is one the reader may read (from one of the single reads)."""
    (view,) = await views(tx, [topic])
    return TopicDetail(
        view=view,
        messages=await messages_page(tx, reader, topic.id),
        runs=await runs_page(tx, reader, topic=topic.id),
        subtasks=await tasks_page(tx, reader, deleted=True, parent=topic.id),
        agent_conversations=await agent_conversations_page(
            tx, reader, include_closed=True, root=topic.id
        ),
    )


async def history_page(
    tx: Tx,
    reader: Person,
    role: str,
    peer: str,
    limit: int | None = None,
    before: str | None = None,
) -> Page[TopicDetail]:
    """Every agent conversation between two roles that the reader may read, newest first, each
    in full; ``peer`` may be a peer installation's role, ``NAME@CONNECTION``. Its cursors are
    those of the agent conversations' list."""
    first = await agent_by_name(tx, role)
    name, _, connection = peer.partition("@")
    if connection and connection != LOCAL:
        pair = peer_pair_key(first.name, name, connection)
    else:
        pair = pair_key(first.name, (await agent_by_name(tx, name)).name)
    between = await agent_conversations_page(
        tx,
        reader,
        include_closed=True,
        pair=pair,
        limit=limit,
        before=before,
    )
    details = [await topic_detail(tx, reader, view.topic) for view in between.items]
    return Page(details, between.next)
