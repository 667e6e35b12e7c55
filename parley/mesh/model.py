"""Values describing nodes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class NodeStatus(StrEnum):
    ONLINE = "online"
    OFFLINE = "offline"


@dataclass(frozen=True)
class Node:
    id: int
    name: str
    hostname: str
    workspace_root: str
    engram: str
    joined_at: datetime
    last_seen_at: datetime
    session_agent_id: int

    def status(self, now: datetime, offline_after: timedelta) -> NodeStatus:
        """Derived, never stored: a node is online while it keeps sending heartbeats."""
        return NodeStatus.ONLINE if now - self.last_seen_at <= offline_after else NodeStatus.OFFLINE


@dataclass(frozen=True)
class Workload:
    """What a node holds: its agents not retired (its node session aside) and turns running."""

    agents: int = 0
    running: int = 0


@dataclass(frozen=True)
class NodeCredential:
    """Broker credentials issued to a node name: only their public key is kept."""

    node: str
    public_key: str
    issued_at: datetime
    revoked_at: datetime | None
