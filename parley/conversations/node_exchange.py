"""Asking a node session: anything in the mesh may; callers queue and it answers one at a time.
Every exchange is kept in the node's own topic with who asked. A person's answer waits in that
topic; a run's answer comes back to the run's session as new text (through the outbox)."""

from __future__ import annotations

from parley.agents.model import Agent
from parley.clock import Clock
from parley.conversations.hops import pass_hop
from parley.conversations.model import HopBudget, Topic, TopicKind
from parley.errors import NotFound
from parley.mesh.nodes import node_session_name
from parley.people.model import Person
from parley.runs.model import Run
from parley.runs.queueing import Queued, check_text, queue_text
from parley.store import Tx


async def ask_node(tx: Tx, clock: Clock, node_name: str, text: str, person: Person) -> Queued:
    """A person's question: its answer waits in the node's topic."""
    check_text(text)
    session, topic = await _asked(tx, clock, node_name)
    return await queue_text(tx, clock.now(), topic, session, text, author_person_id=person.id)


async def ask_node_from_run(
    tx: Tx, clock: Clock, budget: HopBudget, run: Run, working_in: Topic, node_name: str, text: str
) -> Queued:
    """A run's question (a hop of its origin): the answer comes back to the run's session."""
    check_text(text)
    await pass_hop(tx, clock.now(), budget, working_in)
    session, topic = await _asked(tx, clock, node_name)
    return await queue_text(
        tx,
        clock.now(),
        topic,
        session,
        text,
        author_agent_id=run.agent_id,
        from_run_id=run.id,
        reply_agent_id=run.agent_id,
        reply_topic_id=run.topic_id,
    )


async def _asked(tx: Tx, clock: Clock, node_name: str) -> tuple[Agent, Topic]:
    session = await tx.agents.by_name(node_session_name(node_name))
    if session is None or not session.is_node_session:
        raise NotFound(f"no node named {node_name!r}")
    return session, await node_topic(tx, clock, session.id)


async def node_topic(tx: Tx, clock: Clock, node_session_id: int) -> Topic:
    topic = await tx.topics.node_topic(node_session_id)
    if topic is None:
        topic = await tx.topics.insert(TopicKind.NODE, node_session_id, clock.now())
    return topic
