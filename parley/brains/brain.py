"""The Brain port: what one turn of an agent is given, how it acts, and what it returns.

A brain never touches the store. It reads a ``Turn`` and acts only through ``Actions``, which
carries the run's authority (its run token); the hub derives the topic from the run, so nothing a
brain writes can choose it. Streaming text goes to ``Stream`` as it is produced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

# Called with each piece of the reply as the brain produces it (for `parley chat`).
Stream = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class Said:
    """One earlier or new piece of text in the session: who said it, and what."""

    author: str
    text: str


@dataclass(frozen=True)
class Turn:
    run_id: int
    agent: str
    engram: str
    memory: list[str]
    # What the session already holds (earlier turns' text and replies), oldest first.
    history: list[Said]
    # The text this run answers: everything that arrived since the last run, in order.
    new_text: list[Said]
    # Which person's conversation or task this run answers for, in words, and how to report there.
    root: str
    # In an agent conversation, the other role: replying means sending to it. Else None.
    counterpart: str | None
    # The previous turn of this session was stopped by a person.
    was_stopped: bool
    # The brain's own session id from the previous turn of this session (command brains).
    brain_session_id: str | None
    workspace: Path | None
    run_token: str
    # The hub's API, for brains that act from another process (command brains).
    parley_url: str
    # Tools this agent may use: a node session's list is narrower than a hired agent's.
    tools: tuple[str, ...] = field(default=("send", "report", "spawn", "complete", "remember"))


@dataclass(frozen=True)
class TurnOutcome:
    # The turn's own answer: shown to the person in a conversation, logged on a task, kept on
    # the run in an agent conversation (there, answering the other role is an explicit send).
    reply: str
    brain_session_id: str | None = None


class Actions(Protocol):
    """Everything a run may do, each checked by the hub against the run's token.

    Each returns a short confirmation for the brain (an LLM sees it as the tool's result) and
    raises a ParleyError subclass when refused (unknown agent, retired recipient, …).
    """

    async def send(self, to: str, text: str) -> str: ...

    async def report(self, text: str) -> str: ...

    async def spawn(self, agent: str, text: str, thread: bool = False) -> str: ...

    async def complete(self, result: str, failed: bool = False) -> str: ...

    async def remember(self, note: str) -> str: ...

    async def ask_node(self, node: str, text: str) -> str: ...


class Brain(Protocol):
    async def think(self, turn: Turn, actions: Actions, stream: Stream) -> TurnOutcome:
        """Run one turn. Cancelling the task that awaits this must end all of its work."""


# The actions every brain is told about, with one line each (LLM tool descriptions, prompts).
ACTION_HELP = {
    "send": "send(to, text): send text to another agent (a name); answers arrive as new text",
    "report": "report(text): post text where this work comes from (the person or the task)",
    "spawn": "spawn(agent, text): give a subtask to an agent; its result arrives as new text",
    "complete": "complete(result, failed=false): finish the task this run works on",
    "remember": "remember(note): add a note to your own long-term memory",
    "ask_node": "ask_node(node, text): ask a node's own session; its answer arrives as new text",
}
