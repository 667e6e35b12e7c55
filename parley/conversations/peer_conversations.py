"""Agent conversations with a peer installation's role: one role here (``agent_id``), the other
the peer's, by name (``peer_role``), on a connection.

Sending: a role's send to ``NAME@CONNECTION`` goes to the conversation keyed (connection,
root, this role, that role), made on first use with a random thread ID, as a local send does.
Its text is written here and, in the same transaction, as a text frame for the connection's
sender (the general outbox, kind ``frame``), with the conversation's next ``seq``.

Receiving: the peer's text is keyed by (connection, thread ID). An unknown thread addressed to
an exposed, active agent starts a conversation that is its own root (nothing about the peer's
root crosses the wire); a known one continues, if its roles match; its text is queued for the
local role as a local send's is."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from parley.agents.model import HELD_TOPIC_STATES, NEW_TOPIC_STATES, Agent, Lifecycle
from parley.clock import Clock
from parley.conversations.agent_conversations import Refusal, TextRefused
from parley.conversations.hops import pass_hop
from parley.conversations.model import (
    HopBudget,
    Role,
    ThreadEnd,
    Topic,
    TopicKind,
    peer_pair_key,
)
from parley.conversations.refusals import SendRefused
from parley.errors import Conflict, Invalid, NotFound
from parley.federation.model import Connection, ConnectionState, OutboundText, queue_limit
from parley.naming import check_name
from parley.runs.model import Run
from parley.runs.queueing import Queued, check_text, queue_text
from parley.store import Tx


@dataclass(frozen=True)
class SentToPeer:
    conversation: Topic
    message_id: int  # the text as kept here
    seq: int


async def send_to_peer(
    tx: Tx,
    clock: Clock,
    budget: HopBudget,
    run: Run,
    sender: Role,
    topic: Topic,
    name: str,
    connection_name: str,
    text: str,
) -> SentToPeer:
    """``sender``'s send (from ``run``, working in ``topic``) to the peer's role ``name``."""
    check_text(text)
    check_name("agent", name)
    # Shared: a pause or a revoke waits for this send, which then fails with what waits.
    connection = await tx.connections.by_name(connection_name, shared_lock=True)
    if connection is None:
        raise NotFound(f"no connection named {connection_name!r}", field="to")

    def refused(message: str, code: str, why: str) -> SendRefused:
        notice = f"{sender.name}'s text to {name}@{connection_name} was not sent: {code}: {why}"
        return SendRefused(message, code, topic.id, sender.id, notice)

    if connection.state is ConnectionState.PAUSED:
        raise refused(
            f"the connection {connection_name} is paused: nothing can be sent on it",
            Refusal.PAUSED.value,
            f"the connection to {connection_name} was paused here",
        )
    if connection.state is ConnectionState.REVOKED:
        raise refused(
            f"the connection {connection_name} is revoked: nothing goes on it again",
            "revoked",
            f"the connection to {connection_name} was revoked here, for good",
        )
    waiting, limit = await _room(tx, connection, budget.peer_queue)
    if waiting >= limit:
        raise refused(
            f"queue_full: {waiting} texts wait to be sent to {connection.name}, its limit;"
            " send again once the peer has taken some",
            Refusal.QUEUE_FULL.value,
            f"{waiting} texts wait to be sent to {connection_name}, the connection's limit",
        )
    await pass_hop(tx, clock.now(), budget, topic)  # under the root's lock, as a local send
    key = peer_pair_key(sender.name, name, connection.name)
    conversation = await tx.topics.open_agent_conversation(connection.name, topic.root_id, key)
    if conversation is None:
        conversation = await _start(tx, clock, topic, sender, connection, name)
    if conversation is None:
        raise Conflict(f"could not open an agent conversation with {name}@{connection_name}")
    return await _write_frame(tx, clock, run, sender, conversation, text)


async def _room(tx: Tx, connection: Connection, default_limit: int) -> tuple[int, int]:
    """The texts waiting to be sent on ``connection``, and how many may wait."""
    return await tx.frames.waiting(connection.name), queue_limit(connection, default_limit)


async def _start(
    tx: Tx, clock: Clock, sending: Topic, sender: Role, connection: Connection, name: str
) -> Topic | None:
    made = await tx.topics.insert_unless_raced(
        TopicKind.AGENT_CONVERSATION,
        sender.id,
        clock.now(),
        connection=connection.name,
        root_topic_id=sending.root_id,
        origin_topic_id=sending.origin_id,
        peer_role=name,
        pair_key=peer_pair_key(sender.name, name, connection.name),
        thread_id=secrets.token_hex(16),
    )
    if made is None:  # a concurrent send from the same root made it first
        key = peer_pair_key(sender.name, name, connection.name)
        return await tx.topics.open_agent_conversation(connection.name, sending.root_id, key)
    return made


async def _write_frame(
    tx: Tx, clock: Clock, run: Run, sender: Role, conversation: Topic, text: str
) -> SentToPeer:
    now = clock.now()
    assert conversation.connection is not None and conversation.peer_role is not None
    assert conversation.thread_id is not None
    seq = await tx.topics.next_seq(conversation.id)
    message_id = await tx.messages.add(
        conversation.id, "text", text, now, author_agent_id=sender.id, from_run_id=run.id
    )
    frame = OutboundText(
        connection=conversation.connection,
        thread_id=conversation.thread_id,
        seq=seq,
        message_id=secrets.token_hex(16),
        from_role=sender.name,
        to_role=conversation.peer_role,
        body=text,
        topic_id=conversation.id,
        sender_agent_id=sender.id,
    )
    await tx.frames.put(frame, now)
    tx.effects.frames.add(conversation.connection)
    return SentToPeer(conversation, message_id, seq)


# receiving


@dataclass(frozen=True)
class PeerText:
    """One text frame's content, as the receiver hands it over."""

    thread_id: str
    seq: int
    from_role: str
    to_role: str
    body: str


class NotApplied(TextRefused):
    """A frame refused without being applied: its seq is not the next one expected. Nothing
    changes and its verdict is not kept."""

    def __init__(self, message: str) -> None:
        super().__init__(message, Refusal.INVALID)


class SeqAhead(NotApplied):
    """A frame from the future: taken once the ones before it (from ``expected``) have come."""

    def __init__(self, expected: int, seq: int) -> None:
        super().__init__(f"seq {seq} from the future: {expected} is expected next")
        self.expected = expected


class SeqTaken(NotApplied):
    """The frame's seq was used by a frame applied before: another message's, or a concurrent
    copy of this one (which the caller tells apart by its message_id, under the thread's lock)."""

    def __init__(self, seq: int) -> None:
        super().__init__(f"seq {seq} was taken already by another message")


async def receive_from_peer(
    tx: Tx, clock: Clock, connection: Connection, text: PeerText, backlog_full: bool = False
) -> Queued:
    """Apply one text frame of ``connection``; ``TextRefused`` with the wire's reason if it is
    refused (``NotApplied``: refused, and nothing changed). A refusal writes nothing but the
    conversation's seq, so the batch's transaction goes on with the next frame. With
    ``backlog_full``, text is refused as ``queue_full``."""
    conversation = await tx.topics.by_thread(connection.name, text.thread_id)
    if conversation is None:
        check_seq(connection, 1, text.seq)
        _check_taken(connection, backlog_full)
        return await _start_from_peer(tx, clock, connection, text)
    await tx.topics.lock([conversation.id])
    locked = await tx.topics.by_id(conversation.id)
    assert locked is not None
    check_seq(connection, locked.seq_received + 1, text.seq)
    # The frame is applied from here on, taken or refused: either way its seq is used.
    await tx.topics.received_seq(locked.id, text.seq)
    _check_taken(connection, backlog_full)
    return await _continue(tx, clock, connection, locked, text)


def check_seq(connection: Connection, expected: int, seq: int) -> None:
    """A text frame's seq against the one its thread expects next (1 for a new thread): the
    one rule of both receiving paths. Out of order, it is refused without being applied
    (``NotApplied``), or as ``paused`` on a connection that is not active."""
    if seq == expected:
        return
    _check_open(connection)
    raise SeqAhead(expected, seq) if seq > expected else SeqTaken(seq)


def _check_open(connection: Connection) -> None:
    """A paused connection refuses every text as ``paused``, whatever else is wrong with it (a
    seq out of order included: the sender learns why nothing it sends is taken, not a symptom).
    Worded for the peer, who names us: the sender says who paused in its own words."""
    if connection.state is not ConnectionState.ACTIVE:
        raise TextRefused(
            "the receiving side paused the connection: no text is taken", Refusal.PAUSED
        )


def _check_taken(connection: Connection, backlog_full: bool) -> None:
    """Refused, with its seq used (no gap): the peer's thread goes on once we unpause, or
    once our agents have taken up what waits."""
    _check_open(connection)
    if backlog_full:
        raise TextRefused(
            "queue_full: your text waiting here is at the connection's limit; send again later",
            Refusal.QUEUE_FULL,
        )


async def _start_from_peer(tx: Tx, clock: Clock, connection: Connection, text: PeerText) -> Queued:
    recipient = await _exposed(tx, connection, text.to_role, NEW_TOPIC_STATES)
    body = _checked(text.body)
    made = await tx.topics.insert_unless_raced(
        TopicKind.AGENT_CONVERSATION,
        recipient.id,
        clock.now(),
        connection=connection.name,
        peer_role=text.from_role,
        pair_key=peer_pair_key(recipient.name, text.from_role, connection.name),
        thread_id=text.thread_id,
        seq_received=1,
    )
    if made is None:  # the same thread started by a concurrent batch: take it as known
        return await receive_from_peer(tx, clock, connection, text)
    await tx.topics.become_own_root(made.id)
    conversation = await tx.topics.by_id(made.id)
    assert conversation is not None
    return await _queue(tx, clock, connection, conversation, recipient, text.from_role, body)


async def _continue(
    tx: Tx, clock: Clock, connection: Connection, conversation: Topic, text: PeerText
) -> Queued:
    _check_thread(conversation, text)
    # A role holding the conversation takes its text while draining, so that its work ends,
    # and whether or not it is exposed: exposure says who a peer may address, and this role
    # is in the conversation already (it may have started it).
    recipient = await _addressable(tx, connection, text.to_role, HELD_TOPIC_STATES, None)
    body = _checked(text.body)
    return await _queue(tx, clock, connection, conversation, recipient, text.from_role, body)


def check_known(
    connection: Connection,
    conversation: ThreadEnd,
    text: PeerText,
    holder: Agent | None,
    backlog_full: bool,
) -> str:
    """What ``receive_from_peer`` checks of a text in a known thread once its seq is used,
    for a caller that read and locked the thread and read ``holder`` (the agent named by
    ``to_role``, if any) itself: the text's body, or ``TextRefused``."""
    _check_taken(connection, backlog_full)
    _check_thread(conversation, text)
    if holder is None or holder.lifecycle not in HELD_TOPIC_STATES:
        raise _unknown_role(text.to_role)
    return _checked(text.body)


def _check_thread(conversation: Topic | ThreadEnd, text: PeerText) -> None:
    if conversation.is_closed:
        raise TextRefused(
            f"agent conversation {text.thread_id} is closed ({conversation.closed_reason})",
            Refusal.THREAD,
        )
    if (text.from_role, text.to_role) != (conversation.peer_role, conversation.agent_name):
        raise TextRefused(
            f"agent conversation {text.thread_id} is between {conversation.peer_role} (yours)"
            f" and {conversation.agent_name} (ours)",
            Refusal.ROLES,
        )


async def _exposed(
    tx: Tx, connection: Connection, name: str, states: tuple[Lifecycle, ...]
) -> Agent:
    return await _addressable(tx, connection, name, states, connection.id)


async def _addressable(
    tx: Tx,
    connection: Connection,
    name: str,
    states: tuple[Lifecycle, ...],
    exposed_on: int | None,
) -> Agent:
    """The agent ``name`` in one of ``states`` (and exposed on connection ``exposed_on``);
    else the wire's ``unknown_role``, the same for each, so a peer learns nothing more."""
    agent = await tx.agents.by_name(name)
    if (
        agent is None
        or agent.lifecycle not in states
        or (exposed_on is not None and not await tx.connections.is_exposed(exposed_on, agent.id))
    ):
        raise _unknown_role(name)
    return agent


def _unknown_role(name: str) -> TextRefused:
    return TextRefused(f"no agent {name} takes text from you here", Refusal.UNKNOWN_ROLE)


def _checked(body: str) -> str:
    try:
        return check_text(body)
    except Invalid as exc:
        raise TextRefused(exc.message, Refusal.INVALID) from exc


async def _queue(
    tx: Tx,
    clock: Clock,
    connection: Connection,
    conversation: Topic,
    recipient: Agent,
    from_role: str,
    body: str,
) -> Queued:
    try:
        return await queue_text(
            tx,
            clock.now(),
            conversation,
            recipient,
            body,
            author_role=f"{from_role}@{connection.name}",
        )
    except Conflict as exc:  # closed meanwhile (refused before anything was written)
        raise TextRefused(exc.message, Refusal.THREAD) from exc
