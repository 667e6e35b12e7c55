"""A topic in full (its text, runs, subtasks and agent conversations, each a first page that
continues on its own list), and the history between two roles."""

from __future__ import annotations

from collections.abc import Sequence

from parley.agents.lookup import agent_by_name
from parley.conversations.model import LOCAL, Topic, pair_key, peer_pair_key
from parley.people.model import Person
from parley.reads import cursors
from parley.reads.model import Newest, Page, TopicDetail
from parley.reads.runs import runs_of
from parley.reads.topics import agent_conversations_page, messages_of, rooted_in, subtasks_of, views
from parley.store import Tx


async def topic_detail(tx: Tx, reader: Person, topic: Topic) -> TopicDetail:
    """``topic`` is one the reader may read (from one of the single reads): its parts are read
    without checking it again, each check a statement."""
    (view,) = await views(tx, [topic])
    return TopicDetail(
        view=view,
        messages=await messages_of(tx, topic),
        runs=await runs_of(tx, reader, topic),
        subtasks=await subtasks_of(tx, reader, topic),
        agent_conversations=await rooted_in(tx, reader, topic, include_closed=True),
    )


async def newest_in_tree(
    tx: Tx, root: Topic, rooted: Sequence[Topic], limit: int
) -> dict[int, Newest]:
    """The newest ``limit`` messages and runs of each topic of ``rooted``, by topic id, in one
    statement each (not two per topic). ``root`` is one the reader may read (a single read);
    ``rooted`` are topics rooted in it, as ``agent_conversations_page(root=...)`` listed them.
    Visibility follows the root, so the root's check is each one's: a topic rooted elsewhere is
    refused, not read."""
    if any(topic.root_id != root.id for topic in rooted):
        raise ValueError(f"not every topic is rooted in topic {root.id}")
    return await _newest(tx, [topic.id for topic in rooted], limit)


async def newest_in_roots(tx: Tx, roots: Sequence[Topic], limit: int) -> dict[int, Newest]:
    """The newest ``limit`` messages and runs of each of ``roots``, by topic id: roots a page of
    the reader's own listed (``conversations_page``), so each read already as they may."""
    if any(topic.root_id != topic.id for topic in roots):
        raise ValueError("not every topic is a root")
    return await _newest(tx, [topic.id for topic in roots], limit)


async def _newest(tx: Tx, ids: list[int], limit: int) -> dict[int, Newest]:
    messages = await tx.messages.newest_in_topics(ids, limit)
    runs = await tx.runs.newest_in_topics(ids, limit)
    return {
        topic_id: Newest(
            cursors.page(cursors.MESSAGES, messages[topic_id]),
            cursors.page(cursors.RUNS, runs[topic_id]),
        )
        for topic_id in ids
    }


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
