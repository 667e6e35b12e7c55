"""Values describing topics and the text in them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

LOCAL = "local"  # the connection of an agent conversation between two roles of this installation


class TopicKind(StrEnum):
    CONVERSATION = "conversation"
    TASK = "task"
    AGENT_CONVERSATION = "agent_conversation"
    NODE = "node"


class TaskStatus(StrEnum):
    OPEN = "open"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class ThreadEnd:
    """What a receiver checks a peer's text against, of an agent conversation known here: its
    roles (the peer's, and ours by name), whether it is closed, the last seq received. Read
    for every thread of a batch, so it is a few columns, not a whole ``Topic``."""

    id: int
    thread_id: str
    agent_name: str
    peer_role: str | None
    seq_received: int
    closed_reason: str | None
    is_closed: bool


@dataclass(frozen=True)
class Topic:
    id: int
    kind: TopicKind
    agent_id: int
    agent_name: str
    addressed_name: str | None
    person_id: int | None
    person_name: str | None
    text: str | None
    status: str
    result: str | None
    spawned_by_run_id: int | None
    reply_agent_id: int | None
    reply_topic_id: int | None
    thread: bool
    connection: str | None
    root_topic_id: int | None
    sender_agent_id: int | None
    sender_name: str | None  # a local agent conversation's role that wrote first
    thread_id: str | None
    created_at: datetime
    finished_at: datetime | None
    closed_at: datetime | None
    closed_reason: str | None
    # The root at the top of what this topic works for, through subtasks: the person's
    # conversation or task (or a node's exchanges) whose hop budget it spends. None: its root.
    origin_topic_id: int | None = None
    # An agent conversation with a peer installation: the peer's role, by name (the role here
    # is ``agent_id``); the last seq sent and received on the wire.
    peer_role: str | None = None
    seq_sent: int = 0
    seq_received: int = 0
    # A conversation of an A2A client (one per context it names): the client, the context.
    a2a_client_id: int | None = None
    a2a_context: str | None = None

    @property
    def with_peer(self) -> bool:
        return self.peer_role is not None

    @property
    def peer_address(self) -> str | None:
        """The peer's role as a local role addresses it: ``name@connection``."""
        return f"{self.peer_role}@{self.connection}" if self.peer_role is not None else None

    @property
    def is_closed(self) -> bool:
        return self.closed_at is not None

    @property
    def root_id(self) -> int:
        """The topic this one answers for: itself, unless it is an agent conversation."""
        return self.root_topic_id if self.root_topic_id is not None else self.id

    @property
    def origin_id(self) -> int:
        """The root at the top: a subtask's work counts for whoever set it off, at any depth."""
        return self.origin_topic_id if self.origin_topic_id is not None else self.root_id

    @property
    def started_by_peer(self) -> bool:
        """A conversation a peer's role started is its own root (nothing of the peer's root
        crosses the wire); one a role here started is rooted where that role was working."""
        return self.with_peer and self.root_id == self.id

    @property
    def started_by(self) -> str | None:
        """In an agent conversation, the role that wrote first, as this installation names it
        (a peer's as ``name@connection``); else None. With ``asked``, the one way every surface
        shows who asked whom, the same on both sides of a thread with a peer."""
        if self.kind is not TopicKind.AGENT_CONVERSATION:
            return None
        if not self.with_peer:
            return self.sender_name
        return self.peer_address if self.started_by_peer else self.agent_name

    @property
    def asked(self) -> str | None:
        """In an agent conversation, the role written to first (see ``started_by``); else None."""
        if self.kind is not TopicKind.AGENT_CONVERSATION:
            return None
        if self.with_peer and not self.started_by_peer:
            return self.peer_address
        return self.agent_name

    def other_role(self, role_id: int) -> str | None:
        """In an agent conversation, the name of the role that is not ``role_id``; else None."""
        if self.kind is not TopicKind.AGENT_CONVERSATION:
            return None
        if self.with_peer:
            return self.peer_address
        return self.sender_name if role_id == self.agent_id else self.agent_name


@dataclass(frozen=True)
class HopBudget:
    """How much work agents may set off for one origin: at most ``hops`` sends, subtasks and
    node questions in a window of ``window`` from the first of them; and how much of their text
    may wait for a peer, per connection, unless the connection has a limit of its own."""

    hops: int
    window: timedelta
    peer_queue: int = 1000


@dataclass(frozen=True)
class Role:
    """An agent as a party to an agent conversation: enough to key and sign what it sends."""

    id: int
    name: str


@dataclass(frozen=True)
class NewText:
    """Text queued for ``recipient_agent_id``'s run ``run_id`` in ``topic_id``, and who wrote
    it: a local agent (from its run), a person, or a peer's role."""

    topic_id: int
    recipient_agent_id: int
    run_id: int
    body: str
    author_agent_id: int | None = None
    author_person_id: int | None = None
    author_role: str | None = None
    from_run_id: int | None = None
    channel_ref: str | None = None  # the channel conversation it came in from
    reply_agent_id: int | None = None  # whose run a node session's answer goes back to
    reply_topic_id: int | None = None
    a2a_sent_as: str | None = None  # an A2A client's own id for it, under client and agent


@dataclass(frozen=True)
class Message:
    id: int
    topic_id: int
    kind: str
    author: str
    author_agent_id: int | None
    recipient: str | None
    run_id: int | None
    from_run_id: int | None
    body: str
    created_at: datetime
    # What its turn had said when it was stopped, failed or interrupted: not a finished reply.
    cut_short: bool = False


def pair_key(first: str, second: str) -> str:
    """An agent conversation's roles, in an order that does not depend on who wrote first."""
    low, high = sorted((first, second))
    return f"{low}|{high}"


def peer_pair_key(local: str, peer: str, connection: str) -> str:
    """The roles of a conversation with a peer: which one is here matters (a local ``clerk``
    with the peer's ``scribe`` is not a local ``scribe`` with the peer's ``clerk``)."""
    return f"{local}>{peer}@{connection}"
