"""An approval: one tool call of a running turn, waiting for a person's yes or no before it
acts. Its arguments are exactly those the call would act with, so that who decides sees what
they allow. It ends once: approved, or denied (by a person, with or without a reason, or by
nobody answering before its deadline); a stopped turn leaves it waiting for nobody."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class ApprovalState(StrEnum):
    WAITING = "waiting"
    APPROVED = "approved"
    DENIED = "denied"


@dataclass(frozen=True)
class Approval:
    id: int
    run_id: int
    agent_name: str
    node_name: str
    topic_id: int
    tool: str
    arguments: str  # JSON, as the call gave them
    state: ApprovalState
    asked_at: datetime
    deadline: datetime
    decided_at: datetime | None = None
    decided_by: str | None = None  # the person's name; None: the deadline passed, or waiting
    reason: str | None = None
    run_state: str = "running"  # its run's, as read with it

    @property
    def is_waiting(self) -> bool:
        return self.state is ApprovalState.WAITING

    @property
    def is_open(self) -> bool:
        """Still waiting, and its turn still there to go on."""
        return self.is_waiting and self.run_state == "running"

    def as_tool_result(self) -> str | None:
        """What the model reads instead of the call's result: None when it may act."""
        if self.state is ApprovalState.APPROVED:
            return None
        if self.state is ApprovalState.WAITING:
            return f"{self.tool} was not run: its turn ended before anyone decided"
        if self.decided_by is None:
            return (
                f"{self.tool} was not run: nobody approved it in time (approval {self.id} timed"
                " out). Do not retry it unasked; say what you wanted to do instead."
            )
        why = f": {self.reason}" if self.reason else ""
        return f"{self.tool} was not run: {self.decided_by} denied it{why}"


def asks_first(ask: Iterable[str], tool: str) -> bool:
    """Whether a call of ``tool`` (a workspace tool, or ``server.tool``) waits for approval."""
    listed = set(ask)
    server, dot, _ = tool.partition(".")
    return tool in listed or (bool(dot) and server in listed)
