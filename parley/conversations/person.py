"""A person's conversation with an agent: at most one open per person and agent."""

from __future__ import annotations

from parley.agents.lookup import agent_by_name
from parley.agents.selection import pick_for_held_topic, pick_for_new_topic
from parley.clock import Clock
from parley.conversations.lifetime import close_root
from parley.conversations.model import Topic, TopicKind
from parley.errors import Invalid, NotFound
from parley.people.model import Person
from parley.runs.queueing import Queued, check_text, queue_text
from parley.store import Tx


async def say(
    tx: Tx,
    clock: Clock,
    person: Person,
    agent_name: str,
    text: str,
    channel_ref: str | None = None,
) -> Queued:
    """Give ``text`` to the agent in the person's conversation with it, opened on first use;
    ``channel_ref``: the channel conversation it came in from, if any."""
    check_text(text)
    conversation = await open_or_start(tx, clock, person, agent_name)
    worker = await pick_for_held_topic(tx, conversation.agent_name)
    return await queue_text(
        tx, clock.now(), conversation, worker, text, author_person_id=person.id,
        channel_ref=channel_ref,
    )  # fmt: skip


async def conversation_with(tx: Tx, person: Person, agent_name: str) -> Topic:
    addressed = await agent_by_name(tx, agent_name)
    conversation = await tx.topics.open_conversation(person.id, addressed.id)
    if conversation is None:
        raise NotFound(f"you have no conversation with {addressed.name}")
    return conversation


async def delete_conversation(tx: Tx, clock: Clock, person: Person, agent_name: str) -> Topic:
    """Close it: its runs end, its agent conversations close, its history stays for owners."""
    conversation = await conversation_with(tx, person, agent_name)
    await close_root(tx, clock.now(), conversation, f"conversation deleted by {person.name}")
    return conversation


async def open_or_start(tx: Tx, clock: Clock, person: Person, agent_name: str) -> Topic:
    addressed = await agent_by_name(tx, agent_name)
    if addressed.is_node_session:
        raise Invalid(f"{addressed.name} is a node session: ask it with 'parley node ask'")
    existing = await tx.topics.open_conversation(person.id, addressed.id)
    if existing is not None:
        return existing
    worker = await pick_for_new_topic(tx, clock, agent_name)
    started = await tx.topics.insert_unless_raced(
        TopicKind.CONVERSATION,
        worker.id,
        clock.now(),
        addressed_agent_id=addressed.id,
        person_id=person.id,
    )
    return started or await conversation_with(tx, person, agent_name)
