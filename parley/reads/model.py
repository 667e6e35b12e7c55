"""Values of reading: a window asked for, the slice the store gives, the page a reader gets, and
the composite views (a topic with its root, a topic's detail, a run's detail)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from parley.conversations.model import Message, Topic
from parley.runs.model import Run, ToolCall

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 500

# A list's order is one unique column: an id (newest first) or a name (alphabetical).
Key = int | str


@dataclass(frozen=True)
class Window:
    """Which page: at most ``limit`` rows, those after ``after`` in the list's order."""

    limit: int = DEFAULT_LIMIT
    after: Key | None = None


@dataclass(frozen=True)
class Slice(Generic[T]):
    """What the store gives for a window: the rows, and the key the next page starts after
    (None: this was the last page)."""

    items: list[T]
    next_key: Key | None


@dataclass(frozen=True)
class Page(Generic[T]):
    """A page for a reader: the rows and an opaque cursor for the next page (None: no more)."""

    items: list[T]
    next: str | None


@dataclass(frozen=True)
class TopicView:
    """A topic with its root (the topic itself unless it is an agent conversation)."""

    topic: Topic
    root: Topic | None


@dataclass(frozen=True)
class TopicDetail:
    """A topic with the first page of each thing in it; each page continues on its own list."""

    view: TopicView
    messages: Page[Message]
    runs: Page[Run]
    subtasks: Page[TopicView]
    agent_conversations: Page[TopicView]


@dataclass(frozen=True)
class Newest:
    """A topic's first page of messages and of runs, as a page of many topics shows each."""

    messages: Page[Message]
    runs: Page[Run]


@dataclass(frozen=True)
class RunDetail:
    run: Run
    view: TopicView
    input: list[Message]
    # The last of what its command brain's process wrote on stderr; None for other brains.
    stderr: str | None = None
    # Each tool call its turn made, in order.
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass(frozen=True)
class RunLineage:
    """A run with where it came from and what it started: the run whose spawn made its topic
    (None: a person's text, or another agent's, started it) and the runs of the subtasks it
    spawned, oldest first."""

    detail: RunDetail
    set_off_by: Run | None
    set_off: list[Run]
