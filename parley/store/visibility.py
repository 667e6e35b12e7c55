"""Who reads what (it follows the root), as one SQL condition that every list and every single read
uses (a single read is the condition plus ``id = …``).

Visibility follows the root (an agent conversation's root topic; any other topic is its own):
  - a deleted root (closed), and everything rooted in it → owners only;
  - a person's conversation → that person only (another person, even an owner, reads nothing);
  - anything else (a task or subtask, a node's exchanges, a conversation a peer started)
    → every person.
What a reader may not read is absent for them, never forbidden."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, FromClause, and_, exists, func, or_, select

from parley.conversations.model import TopicKind
from parley.people.model import Person
from parley.store.tables import topics

_CONVERSATION = TopicKind.CONVERSATION.value
# Made once: an alias's columns take milliseconds to build, the condition around them little.
_ROOT = topics.alias("visible_root")
_TOPIC = topics.alias("visible_topic")


def readable_topic(reader: Person, topic: FromClause = topics) -> ColumnElement[bool]:
    """True for the rows of ``topic`` (the topics table or an alias of it) ``reader`` may read."""
    root = _ROOT
    own_or_shared = or_(root.c.kind != _CONVERSATION, root.c.person_id == reader.id)
    if reader.is_owner:
        allowed = or_(root.c.closed_at.is_not(None), own_or_shared)
    else:
        allowed = and_(root.c.closed_at.is_(None), own_or_shared)
    root_id = func.coalesce(topic.c.root_topic_id, topic.c.id)
    return exists().where(root.c.id == root_id, allowed)


def readable_topic_id(reader: Person, topic_id: ColumnElement[Any]) -> ColumnElement[bool]:
    """The same rule for a row that points at a topic (a run, a message)."""
    topic = _TOPIC
    return exists(select(topic.c.id).where(topic.c.id == topic_id, readable_topic(reader, topic)))
