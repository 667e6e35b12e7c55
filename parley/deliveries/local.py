"""The local kinds: text for a session of this installation, queued inside the settling
transaction. A destination that is gone (its topic closed, its agent retired) is a final
verdict; the item's fate is then written, as a notice, into the topic it came from."""

from __future__ import annotations

from parley.agents.model import HELD_TOPIC_STATES
from parley.clock import Clock
from parley.deliveries.model import NodeAnswer, SessionText, TaskCompletion
from parley.errors import Conflict
from parley.runs.queueing import queue_text
from parley.store import Tx


async def queue_for_session(tx: Tx, clock: Clock, payload: SessionText) -> None:
    topic = await tx.topics.by_id(payload.topic_id)
    agent = await tx.agents.by_id(payload.agent_id)
    if topic is None or topic.is_closed:
        reason = topic.closed_reason if topic else "gone"
        raise Conflict(f"the topic it answers was closed ({reason})", reason="thread")
    if agent is None or agent.lifecycle not in HELD_TOPIC_STATES:
        name = agent.name if agent else f"agent {payload.agent_id}"
        raise Conflict(f"{name} takes no more work ({agent.lifecycle.value if agent else 'gone'})")
    await queue_text(
        tx, clock.now(), topic, agent, payload.text, author_agent_id=payload.author_agent_id
    )


async def _note(tx: Tx, clock: Clock, topic_id: int, agent_id: int, what: str, why: str) -> None:
    agent = await tx.agents.by_id(agent_id)
    name = agent.name if agent else f"agent {agent_id}"
    await tx.messages.add(
        topic_id, "notice", f"{what} was not delivered to {name}: {why}", clock.now()
    )


class TaskCompletionDeliverer:
    """A subtask's result, as new text for the run that spawned it."""

    async def deliver(self, tx: Tx, clock: Clock, payload: TaskCompletion) -> None:
        await queue_for_session(tx, clock, payload)

    async def undeliverable(
        self, tx: Tx, clock: Clock, payload: TaskCompletion, reason: str
    ) -> None:
        await _note(tx, clock, payload.task_id, payload.agent_id, "This task's result", reason)


class NodeAnswerDeliverer:
    """A node session's answer, as new text for the run that asked."""

    async def deliver(self, tx: Tx, clock: Clock, payload: NodeAnswer) -> None:
        await queue_for_session(tx, clock, payload)

    async def undeliverable(self, tx: Tx, clock: Clock, payload: NodeAnswer, reason: str) -> None:
        if payload.node_topic_id is not None:
            await _note(tx, clock, payload.node_topic_id, payload.agent_id, "The answer", reason)
