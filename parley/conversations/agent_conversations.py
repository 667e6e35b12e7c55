"""Agent conversations: one exchange about one topic between two roles, keyed
``(connection, root, sending role, recipient role)`` and named on the wire by a random thread ID.

A send from a run goes to the conversation with that key, made on first use; the key does not
depend on who writes first, so a reply goes back in the same conversation, and a relay rooted in
the same root brings the answer back down the chain.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from enum import StrEnum

from parley.agents.model import Agent
from parley.agents.selection import pick_for_held_topic, pick_for_new_topic
from parley.clock import Clock
from parley.conversations.hops import pass_hop
from parley.conversations.model import LOCAL, HopBudget, Role, Topic, TopicKind, pair_key
from parley.errors import Conflict, Invalid
from parley.runs.model import Run
from parley.runs.queueing import Queued, check_text, queue_text
from parley.store import Tx


class Refusal(StrEnum):
    """Why a receiver refuses text for an agent conversation (the wire's reasons)."""

    THREAD = "thread"
    ROLES = "roles"
    UNKNOWN_ROLE = "unknown_role"
    PAUSED = "paused"
    QUEUE_FULL = "queue_full"
    INVALID = "invalid"


class TextRefused(Conflict):
    """Text an agent conversation does not take; ``reason`` is one of ``Refusal``."""

    def __init__(self, message: str, reason: Refusal) -> None:
        super().__init__(message, reason=reason.value)
        self.reason = reason


@dataclass(frozen=True)
class Sent:
    conversation: Topic
    queued: Queued


async def send_from_run(
    tx: Tx,
    clock: Clock,
    budget: HopBudget,
    run: Run,
    sender: Role,
    topic: Topic,
    to: str,
    text: str,
) -> Sent:
    """A role's send from its run (working in ``topic``). The root comes from the run's topic,
    never from the caller; the send is a hop of that root's origin."""
    check_text(text)
    name, _, connection = to.partition("@")
    if connection and connection != LOCAL:  # hub/actions.py sends those to the peer
        raise Invalid(f"{to!r} is a peer's role: send_to_peer takes it", field="to")
    if name == sender.name:
        raise Invalid("an agent cannot send to itself", field="to")
    # Under the root's lock, so that a deletion of the root waits for this send or this send
    # sees it: the deletion closes the root and its agent conversations at once, and a send that
    # saw the root open but its conversation closed would otherwise open a new one under a dead
    # root. A stop of the root takes that lock too.
    await pass_hop(tx, clock.now(), budget, topic)
    key = pair_key(sender.name, name)
    conversation = _answering_in(topic, key) or await tx.topics.open_agent_conversation(
        LOCAL, topic.root_id, key
    )
    if conversation is None:
        recipient = await pick_for_new_topic(tx, clock, name)
        conversation = await _start(tx, clock, topic, sender, recipient)
    if conversation is None:  # a concurrent send from the same root made it first
        conversation = await tx.topics.open_agent_conversation(LOCAL, topic.root_id, key)
    if conversation is None:
        raise Conflict(f"could not open an agent conversation with {name}; try again")
    other = conversation.other_role(sender.id)
    assert other is not None
    recipient = await pick_for_held_topic(tx, other)
    queued = await queue_text(
        tx,
        clock.now(),
        conversation,
        recipient,
        text,
        root_locked=True,  # above, and the conversation was found open under it
        author_agent_id=sender.id,
        from_run_id=run.id,
    )
    return Sent(conversation, queued)


def _answering_in(topic: Topic, key: str) -> Topic | None:
    """The run's own topic when it is the conversation sent to (an agent answering the other
    role), found without a statement. It is open: a local agent conversation closes only with
    its root, which ``pass_hop`` found open under the root's lock."""
    if (
        topic.kind is TopicKind.AGENT_CONVERSATION
        and topic.connection == LOCAL
        and topic.sender_name is not None
        and pair_key(topic.agent_name, topic.sender_name) == key
    ):
        return topic
    return None


async def _start(
    tx: Tx, clock: Clock, sending: Topic, sender: Role, recipient: Agent
) -> Topic | None:
    return await tx.topics.insert_unless_raced(
        TopicKind.AGENT_CONVERSATION,
        recipient.id,
        clock.now(),
        connection=LOCAL,
        root_topic_id=sending.root_id,
        origin_topic_id=sending.origin_id,
        sender_agent_id=sender.id,
        pair_key=pair_key(sender.name, recipient.name),
        thread_id=secrets.token_hex(16),
    )
