"""Values describing runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from parley.conversations.model import TopicKind


class RunState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    STOPPED = "stopped"
    FAILED = "failed"


OPEN_STATES = (RunState.QUEUED, RunState.RUNNING)

# What a run's id may be: a 64-bit integer of the store's. A message may claim any other.
RUN_IDS = range(1, 2**63)

# Why a run failed with its turn gone (``runs/recovery.py``): its text waits for the next run.
INTERRUPTED = "interrupted"
NODE_LOST = "node_lost"


@dataclass(frozen=True)
class Run:
    id: int
    agent_id: int
    agent_name: str
    node_name: str
    topic_id: int
    topic_kind: TopicKind
    session_id: int
    state: RunState
    reason: str | None
    output: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    # The run is a node session's (whose tools are fewer).
    by_node_session: bool = False
    # The hash of its run token while it runs: the authority of whatever acts for it.
    token_hash: str | None = field(default=None, repr=False)

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    @property
    def cut_short(self) -> bool:
        """Its output is what its turn had said when it was stopped, failed or interrupted,
        not a finished reply."""
        return self.output is not None and self.state is not RunState.FINISHED

    @property
    def topic(self) -> str:
        """The topic as the log names it: ``conversation:7``, ``task:12``."""
        return f"{self.topic_kind.value}:{self.topic_id}"


@dataclass(frozen=True)
class RunChange:
    """A run's move to ``state`` at ``at``, as a transaction committed it: for whoever watches
    the run and for the operator's log. ``run`` is the run as read before the move."""

    run: Run
    state: RunState
    at: datetime
    reason: str | None = None

    @property
    def is_end(self) -> bool:
        return self.state not in OPEN_STATES


@dataclass(frozen=True)
class Waiting:
    """A queued run that may start now, as the scheduler first reads it: enough to choose
    which start (its whole ``Run`` is read for those only)."""

    id: int
    agent_id: int
    session_id: int


@dataclass(frozen=True)
class Session:
    id: int
    agent_id: int
    topic_id: int
    brain_session_id: str | None
    was_stopped: bool


@dataclass(frozen=True)
class ToolCall:
    """One call a run's turn made to a tool, as the run keeps it (``node/tool_calls.py``)."""

    seq: int  # its place among the run's calls, from 1
    tool: str
    arguments: str  # JSON, long texts shortened, secrets redacted
    result_bytes: int
    duration_ms: int
    error: str | None  # why it was refused or failed; None when it worked
    after_chars: int  # how much of the turn's reply came before it
