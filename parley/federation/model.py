"""Values of federation: a connection as this side knows it, an invite, and the outbox payloads
of frames waiting to be sent (text, and the close of a thread)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Annotated, ClassVar, Literal

from pydantic import Field, TypeAdapter

from parley.deliveries.model import Payload

FRAME_KIND = "frame"


class ConnectionState(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"  # reversible, on this side (later)
    REVOKED = "revoked"  # for good (later)


# The reason a peer gives with its 401 when it revoked the connection (any other 401 may pass).
REVOKED = ConnectionState.REVOKED.value


PARLEY = "parley"  # a connection's kind: a peer installation
A2A = "a2a"  # an A2A agent


@dataclass(frozen=True)
class Connection:
    """A link to a peer installation. The token to call it is not part of this value: only the
    sender reads it (``PeerEndpoint``)."""

    id: int
    name: str
    url: str
    state: ConnectionState
    queue_limit: int | None
    created_at: datetime
    last_contact_at: datetime | None
    failures: int  # transport failures in a row; 0 after any answer
    retry_at: datetime | None  # the sender's next try after a failure
    last_error: str | None
    kind: str = PARLEY  # PARLEY: a peer installation; A2A: an A2A agent
    card: str | None = None  # an A2A agent's card, as JSON

    @property
    def is_a2a(self) -> bool:
        return self.kind == A2A


def queue_limit(connection: Connection, default: int) -> int:
    """How much text may wait on ``connection``, each way."""
    return connection.queue_limit or default


@dataclass(frozen=True)
class ConnectionStatus:
    """A connection as ``connection list`` shows it."""

    connection: Connection
    exposed: list[str]
    queued: int  # frames waiting to be sent
    # Threads parked after the peer had them sent again too often: each ID with the reason.
    parked: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PeerEndpoint:
    """Where and how to call a peer: its URL and the token it issued us."""

    connection_id: int
    name: str
    url: str
    token: str
    kind: str = "parley"
    card: str | None = None  # an A2A agent's, as JSON

    def __repr__(self) -> str:  # never the token, in a log or a traceback
        return f"PeerEndpoint({self.name!r}, {self.url!r})"


@dataclass(frozen=True)
class Invite:
    id: int
    name: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None


class OutboundText(Payload):
    """A text frame waiting in the outbox for its connection's sender; ``topic_id`` and
    ``sender_agent_id`` say where its fate is noted should the peer refuse it."""

    kind: ClassVar[str] = FRAME_KIND
    type: Literal["text"] = "text"
    connection: str
    thread_id: str
    seq: int
    message_id: str
    from_role: str
    to_role: str
    body: str
    topic_id: int
    sender_agent_id: int

    def outbox_key(self) -> str:
        return frame_key(self.message_id)


class OutboundClose(Payload):
    """The close of a thread whose root was deleted here, waiting for its connection's sender.
    It takes the thread's next ``seq`` so that it goes after the thread's text."""

    kind: ClassVar[str] = FRAME_KIND
    type: Literal["close"] = "close"
    connection: str
    thread_id: str
    seq: int
    reason: str
    topic_id: int

    def outbox_key(self) -> str:
        return f"close:{self.connection}:{self.thread_id}"  # a thread closes once


class OutboundDropped(Payload):
    """A report that text of a thread the peer sent and we had taken was dropped (``count``
    texts, our connection paused before a turn answered them), waiting for its connection's
    sender: it goes once unpaused. Its ``seq`` is the thread's last (it takes none: the
    thread goes on), so that it goes after the thread's text sent before it."""

    kind: ClassVar[str] = FRAME_KIND
    type: Literal["dropped"] = "dropped"
    connection: str
    thread_id: str
    seq: int
    count: int
    reason: str
    topic_id: int
    key: str  # each report is one: a thread may be paused again later

    def outbox_key(self) -> str:
        return f"dropped:{self.connection}:{self.thread_id}:{self.key}"


Outbound = OutboundText | OutboundClose | OutboundDropped
_OUTBOUND: TypeAdapter[Outbound] = TypeAdapter(
    Annotated[OutboundText | OutboundClose | OutboundDropped, Field(discriminator="type")]
)


def outbound_of(payload: str) -> Outbound:
    """A frame item's payload, as ``FramesRepo.put`` kept it."""
    return _OUTBOUND.validate_json(payload)


TEXT_KEY = "frame:"  # the start of a text frame's outbox key (a close's is "close:")


def frame_key(message_id: str) -> str:
    return f"{TEXT_KEY}{message_id}"


@dataclass(frozen=True)
class RemoteTask:
    """A task of an A2A agent started by one of our roles' texts (``frame``, as it was sent),
    followed until it ends."""

    id: int
    peer: PeerEndpoint
    topic_id: int
    remote_task_id: str
    frame: OutboundText
    state: str
    cancel_asked: bool
    replies: int
    created_at: datetime
    deadline: datetime


@dataclass(frozen=True)
class SentBefore:
    """A text to an A2A agent that an earlier attempt sent, or began to: the task the agent
    made of it, if that attempt lived to record it (None: it may or may not have got there)."""

    remote_task_id: str | None
