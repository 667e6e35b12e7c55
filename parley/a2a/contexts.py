"""An A2A client's texts to an exposed agent. A context is one conversation between that client
and the agent, opened by the first text naming it (or minted); each text the client sends is an
A2A task, unless it names a task still open, which it then continues (``calls.py``); a task's
state is that of the run it follows now (``tasks.py``: a text moves on to the next run when its
turn is interrupted, and so does its task)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from parley.a2a.model import A2AClient, Exposed
from parley.agents.model import Agent
from parley.agents.selection import pick_for_held_topic, pick_for_new_topic
from parley.clock import Clock
from parley.conversations.model import Topic, TopicKind
from parley.errors import Conflict, Invalid
from parley.runs.queueing import check_text, queue_text
from parley.store import Tx
from parley.store.a2a_tasks import TaskRow

MAX_CONTEXT = 200  # the column's
MAX_MESSAGE_ID = 200  # what ``messages.a2a_sent_as`` keeps of it


@dataclass(frozen=True)
class Sent:
    task: TaskRow
    topic: Topic


def author(client: A2AClient) -> str:
    """How a client's text names its author to the agent and in the history."""
    return f"a2a:{client.name}"


def check_context(context: str) -> str:
    if not context or len(context) > MAX_CONTEXT or "\x00" in context:
        raise Invalid(f"contextId: 1 to {MAX_CONTEXT} characters, no NUL", field="context_id")
    return context


def sent_key(client: A2AClient, agent: Exposed, message_id: str) -> str | None:
    """Where a text keeps the client's own id for it (its ``messageId``): under the client and
    the agent, as a client may send one message to several agents. None: it gave none."""
    if not message_id:
        return None
    if len(message_id) > MAX_MESSAGE_ID or "\x00" in message_id:
        raise Invalid(f"messageId: at most {MAX_MESSAGE_ID} characters, no NUL", field="message_id")
    return f"{client.id}/{agent.agent_id}/{message_id}"


def sent_id(key: str) -> str:
    """The client's ``messageId`` in a ``sent_key``."""
    return key.split("/", 2)[2]


async def send(
    tx: Tx,
    clock: Clock,
    client: A2AClient,
    agent: Exposed,
    context: str | None,
    text: str,
    sent_as: str | None = None,
) -> Sent:
    """Queue ``text`` in the client's context with the agent (opened now if new), kept under
    ``sent_as`` (a ``sent_key``): a text kept under it already is a Conflict (``SENT_BEFORE``)."""
    check_text(text)
    context = context or uuid.uuid4().hex
    topic, worker = await _open_or_start(tx, clock, client, agent, context)
    if worker is None:
        worker = await pick_for_held_topic(tx, topic.agent_name)
    now = clock.now()
    queued = await queue_text(
        tx, now, topic, worker, text, author_role=author(client), a2a_sent_as=sent_as
    )
    # As the store reads it (``task_of_client``): a new text is a task of its own, on its run.
    task = TaskRow(queued.message_id, context, topic.id, queued.run_id, text, now)
    return Sent(task, topic)


async def _open_or_start(
    tx: Tx, clock: Clock, client: A2AClient, agent: Exposed, context: str
) -> tuple[Topic, Agent | None]:
    """The context's conversation; with the agent that took it, if it starts now."""
    check_context(context)
    topic = await _context_topic(tx, client, agent, context)
    if topic is not None:
        if topic.is_closed:
            raise Conflict(
                f"context {context} is closed ({topic.closed_reason}): send without a"
                " contextId to start another",
                reason="context_closed",
            )
        return topic, None
    worker = await pick_for_new_topic(tx, clock, agent.name)
    started = await tx.topics.insert_unless_raced(
        TopicKind.CONVERSATION,
        worker.id,
        clock.now(),
        addressed_agent_id=agent.agent_id,
        person_id=client.created_by_person_id,
        a2a_client_id=client.id,
        a2a_context=context,
    )
    if started is not None:
        return started, worker
    raced = await _context_topic(tx, client, agent, context)
    assert raced is not None  # the unique index let the other one in
    return raced, None


async def _context_topic(tx: Tx, client: A2AClient, agent: Exposed, context: str) -> Topic | None:
    return await tx.topics.a2a_context(client.id, agent.agent_id, context)
