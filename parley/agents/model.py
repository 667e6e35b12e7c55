"""Values describing agents."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Lifecycle(StrEnum):
    HIRED = "hired"
    ACTIVE = "active"
    DRAINING = "draining"
    RETIRED = "retired"
    # A node session exists because its node does; it has no hiring lifecycle at all.
    INHERENT = "inherent"


class AgentKind(StrEnum):
    AGENT = "agent"
    NODE_SESSION = "node"


class Modality(StrEnum):
    AI = "ai"
    HUMAN = "human"


# Which states may take work: a new topic only from an active agent; text in a topic the
# agent already holds also from a draining one, so that its running work can finish.
NEW_TOPIC_STATES = (Lifecycle.ACTIVE, Lifecycle.INHERENT)
HELD_TOPIC_STATES = (Lifecycle.ACTIVE, Lifecycle.DRAINING, Lifecycle.INHERENT)


@dataclass(frozen=True)
class McpServer:
    """An MCP server of an agent: a command its node starts (stdio), or a URL (streamable HTTP)
    with headers whose values its node's environment gives, by variable name."""

    name: str
    command: str | None = None
    url: str | None = None
    # (header, variable name), sorted: the value is read on the node at start, never stored.
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def target(self) -> str:
        return self.command if self.command is not None else self.url or ""


@dataclass(frozen=True)
class Agent:
    id: int
    name: str
    kind: AgentKind
    node_id: int
    node_name: str
    lifecycle: Lifecycle
    modality: Modality
    human_person: str | None
    engram: str
    brain: str
    max_sessions: int
    is_template: bool
    surge_threshold: int | None
    clone_lifetime_seconds: int | None
    template_name: str | None
    expires_at: datetime | None
    workspace: str | None
    retired_reason: str | None
    retired_at: datetime | None
    created_at: datetime
    warning_count: int
    # Names of the variables declared for its command brain (values are never read with it).
    env: tuple[str, ...] = ()
    env_from_server: tuple[str, ...] = ()
    # Its workspace tools (agents/tools.py), in the action table's order.
    tools: tuple[str, ...] = ()
    # Its own MCP servers (agents/mcp.py), by name.
    mcp_servers: tuple[McpServer, ...] = ()
    # Which of its tools wait for a person's approval before each call (agents/tools.py).
    ask: tuple[str, ...] = ("run",)

    @property
    def is_node_session(self) -> bool:
        return self.kind is AgentKind.NODE_SESSION


# Where a run that wrote a note was working, in words (by its topic's kind).
_WORKING_IN = {
    "conversation": "a person's conversation",
    "task": "a task",
    "agent_conversation": "an agent conversation",
    "node": "a node's exchanges",
}


@dataclass(frozen=True)
class AgentVariable:
    """A variable declared for an agent's command brain: its value, or None when the node's
    environment gives it at each turn (``from_server``)."""

    name: str
    value: str | None

    @property
    def from_server(self) -> bool:
        return self.value is None


@dataclass(frozen=True)
class MemoryNote:
    """A note of an agent's memory, which every member reads, whoever wrote it and wherever."""

    id: int
    agent_name: str
    note: str
    written_by: str | None  # the person who wrote it
    written_at: datetime
    run_id: int | None = None  # ... or the run that did
    topic_kind: str | None = None  # and the kind of topic that run was working in

    @property
    def origin(self) -> str:
        if self.run_id is not None:
            where = _WORKING_IN.get(self.topic_kind or "", "a topic")
            return f"run {self.run_id} in {where}"
        if self.written_by is not None:
            return f"person {self.written_by}"
        return "a run (not recorded)"  # written before runs were recorded with their notes


@dataclass(frozen=True)
class AgentWarning:
    id: int
    agent_name: str
    reason: str
    given_by: str | None
    given_at: datetime


@dataclass(frozen=True)
class SettingChange:
    """One setting of an agent changed by an owner (``agent set``): what it was and became
    (variables by name only), who changed it and when."""

    id: int
    agent_name: str
    setting: str
    old: str | None
    new: str | None
    changed_by: str | None
    changed_at: datetime
