"""What a transaction set in motion, acted on once it has committed (never before: a turn must
not start on text that a rollback takes back). The store hands every committed transaction's
effects to the subscribers the runtime set at start; no call site acts on them by hand."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from parley.agents.model import Agent
from parley.approvals.model import Approval
from parley.runs.model import Run, RunChange


@dataclass
class Effects:
    # New text was queued (or a run requeued): the scheduler looks again.
    wake: bool = False
    # A run ended: a run queued behind it (its session's, its agent's cap) may start; the
    # scheduler looks again if any was left queued.
    freed: bool = False
    # Something was written to the outbox.
    outbox: bool = False
    # Agents hired here (surge clones) whose node must make their workspace.
    hired: list[Agent] = field(default_factory=list)
    # Runs stopped here whose turn, if running, must be cancelled on its node.
    stopped: list[Run] = field(default_factory=list)
    # Runs that started or ended here (finished, failed, stopped): for watchers and the log.
    changed: list[RunChange] = field(default_factory=list)
    # Topics that ended (a task done, failed, cancelled) or closed here: for whoever waits.
    ended_topics: list[int] = field(default_factory=list)
    # Connections with frames written here, for the federation sender.
    frames: set[str] = field(default_factory=set)
    # Subtasks spawned with ``thread``: a channel thread may be made and bound to each.
    threads_asked: list[int] = field(default_factory=list)
    # Runs whose words so far were kept after they were cut short: the pages showing them
    # look again.
    cut_short: list[int] = field(default_factory=list)
    # Refusals told in a root (text that did not reach its recipient): (root id, the notice),
    # for whoever waits on that root.
    refused: list[tuple[int, str]] = field(default_factory=list)
    # Approvals asked or decided here: for whoever follows their run or waits on them.
    approvals: list[Approval] = field(default_factory=list)
    # Tasks of A2A agents were started or are to be cancelled: their follower looks again.
    remote_tasks: bool = False
    # A client asked for A2A push notifications: their queue looks again.
    pushes: bool = False

    @property
    def empty(self) -> bool:
        return not (
            self.wake
            or self.freed
            or self.outbox
            or self.hired
            or self.stopped
            or self.changed
            or self.ended_topics
            or self.frames
            or self.threads_asked
            or self.cut_short
            or self.refused
            or self.approvals
            or self.remote_tasks
            or self.pushes
        )


# One part of the hub acting on a committed transaction's effects.
AfterCommit = Callable[[Effects], Awaitable[None]]
