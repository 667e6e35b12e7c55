"""Values of the delivery queue: an item's state, the item as stored, the typed payload of each
kind, and the keys that make a decision's delivery happen once however often it is replayed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class DeliveryState(StrEnum):
    # Waiting for its next attempt, or being attempted: a claim (``claimed_until``) is a lease,
    # not a state, so that a worker dying mid-send leaves nothing to reset — the item is simply
    # due again once the lease has passed.
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"  # for good: a final verdict, never retried


@dataclass(frozen=True)
class Delivery:
    id: int
    key: str  # the idempotency key: unique, and sent with every attempt of a remote kind
    kind: str
    payload: str  # JSON of the kind's payload model
    state: DeliveryState
    attempts: int  # attempts begun (a claim counts, even if its worker died before settling)
    next_attempt_at: datetime
    claimed_by: str | None
    claimed_until: datetime | None
    last_attempt_at: datetime | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None
    route: RouteNote | None = None


@dataclass(frozen=True)
class RouteNote:
    """Where a routed delivery goes and why (see ``parley.channels.router``): its mode
    (``bound``, ``fallback``; None for a post that was not routed, a reply), the reason, and
    the destination in words."""

    mode: str | None
    reason: str
    destination: str | None


class Payload(BaseModel):
    """What one kind of delivery carries; each kind has its own model, parsed once per attempt."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: ClassVar[str]


class SessionText(Payload):
    """New text for one agent's session in one topic (queued as if it had been sent there)."""

    agent_id: int
    topic_id: int
    text: str
    author_agent_id: int | None = None


class TaskCompletion(SessionText):
    """A subtask's result, for the run that spawned it; its fate is noted in the subtask."""

    kind: ClassVar[str] = "task_completion"
    task_id: int
    # Its own idempotency key (absent from items written before it was recorded), and the
    # channel conversation the spawning run's text came from (JSON), for the channel router.
    key: str | None = None
    requester: str | None = None


class NodeAnswer(SessionText):
    """A node session's answer to the run that asked it; its fate is noted in the node's topic
    (``node_topic_id``, absent from items written before it was recorded)."""

    kind: ClassVar[str] = "node_answer"
    node_topic_id: int | None = None


def completion_key(task_id: int, run_id: int | None, person_id: int | None) -> str:
    """One completion per (task, run): ``task:T:run:R`` when run R's ``complete`` (or a human
    agent's answer in run R) ended it; ``task:T:person:P`` when person P cancelled or deleted it,
    which no run did. A task ends once, so at most one of these exists per task."""
    if run_id is not None:
        return f"task:{task_id}:run:{run_id}"
    return f"task:{task_id}:person:{person_id}"


def node_answer_key(run_id: int) -> str:
    """The answer of node-session run R to the run that asked it: one per answering run."""
    return f"node-answer:{run_id}"
