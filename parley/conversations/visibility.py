"""Who reads what (DESIGN §3.2.6): visibility follows the root. A person's conversation → that
person; a task, a node's exchanges, or an agent conversation the peer started → every person;
an agent conversation whose root is gone → owners. What a person may not read is reported as
absent, never as forbidden, so that its existence is not revealed."""

from __future__ import annotations

from collections.abc import Sequence

from parley.conversations.model import Topic, TopicKind
from parley.errors import NotFound
from parley.people.model import Person
from parley.store import Tx


def may_read(person: Person, topic: Topic, root: Topic | None) -> bool:
    """``root`` is the topic's root (the topic itself unless it is an agent conversation)."""
    if root is None or (root.is_closed and root.id != topic.id):
        return person.is_owner
    if root.kind is TopicKind.CONVERSATION:
        return root.person_id == person.id
    return True  # a task, a node's exchanges, an agent conversation a peer started


async def readable_topic(tx: Tx, person: Person, topic_id: int, what: str) -> Topic:
    topic = await tx.topics.by_id(topic_id)
    if topic is None or not may_read(person, topic, await _root(tx, topic)):
        raise NotFound(f"no {what} {topic_id}")
    return topic


async def readable_thread(tx: Tx, person: Person, thread_id: str) -> Topic:
    topic = await tx.topics.by_thread("local", thread_id)
    if topic is None or not may_read(person, topic, await _root(tx, topic)):
        raise NotFound(f"no agent conversation {thread_id}")
    return topic


async def only_readable(tx: Tx, person: Person, topics: Sequence[Topic]) -> list[Topic]:
    roots = await tx.topics.by_ids({topic.root_id for topic in topics})
    return [topic for topic in topics if may_read(person, topic, roots.get(topic.root_id))]


async def _root(tx: Tx, topic: Topic) -> Topic | None:
    return topic if topic.root_id == topic.id else await tx.topics.by_id(topic.root_id)
