"""Building the runtime's responses from the store: a topic with its text, runs and offshoots."""

from __future__ import annotations

from parley.api.schemas.runs import RunOut
from parley.api.schemas.topics import MessageOut, TopicDetailOut, TopicOut
from parley.conversations.model import Topic
from parley.conversations.visibility import only_readable
from parley.people.model import Person
from parley.store import Tx


async def topic_out(tx: Tx, topic: Topic) -> TopicOut:
    root = topic if topic.root_id == topic.id else await tx.topics.by_id(topic.root_id)
    return TopicOut.of(topic, root)


async def topics_out(tx: Tx, topics: list[Topic]) -> list[TopicOut]:
    roots = await tx.topics.by_ids({topic.root_id for topic in topics})
    return [TopicOut.of(topic, roots.get(topic.root_id)) for topic in topics]


async def topic_detail(tx: Tx, person: Person, topic: Topic) -> TopicDetailOut:
    messages = await tx.messages.in_topic(topic.id)
    runs = await tx.runs.listed(topic_ids=[topic.id])
    subtasks = await only_readable(tx, person, await tx.topics.subtasks_of(topic.id))
    rooted = await only_readable(tx, person, await tx.topics.rooted_in(topic.id))
    return TopicDetailOut(
        topic=await topic_out(tx, topic),
        messages=[MessageOut.of(message) for message in messages],
        runs=[RunOut.of(run) for run in reversed(runs)],
        subtasks=await topics_out(tx, subtasks),
        agent_conversations=await topics_out(tx, [t for t in rooted if t.id != topic.id]),
    )
