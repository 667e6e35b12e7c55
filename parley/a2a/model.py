"""The values of A2A: a client an owner let in, and an agent exposed to clients."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class A2AClient:
    id: int
    name: str
    created_by: str  # the owner who let it in: the person of its contexts' conversations
    created_by_person_id: int
    created_at: datetime
    removed_at: datetime | None = None

    @property
    def is_active(self) -> bool:
        return self.removed_at is None


@dataclass(frozen=True)
class NewA2AClient:
    """A client just added: its token, shown this once."""

    client: A2AClient
    token: str


@dataclass(frozen=True)
class Exposed:
    """An agent A2A clients may reach, at ``/a2a/<name>/``."""

    agent_id: int
    name: str
    engram: str
    exposed_at: datetime


@dataclass(frozen=True)
class PushConfig:
    """Where a client asked to be told of a task's changes (its text, ``message_id``)."""

    id: int
    client_id: int
    message_id: int
    config_id: str
    url: str
    token: str | None
    auth_scheme: str | None
    auth_credentials: str | None
    created_at: datetime
    done_at: datetime | None = None


@dataclass(frozen=True)
class TaskFilter:
    """Which of a client's tasks a list gives: in one context; whose run (the one it follows
    now) is in one of ``run_states`` (None: any; "none" stands for a text not yet given a run,
    "continued" for a queued run after an ended one of the task); whose running turn waits for
    an approval, or does not (``asking``; None: either); updated after."""

    context: str | None = None
    run_states: tuple[str, ...] | None = None
    updated_after: datetime | None = None
    asking: bool | None = None
