"""The Brain port: what one turn of an agent is given, how it acts, and what it returns.

A brain never touches the store. It reads a ``Turn`` and acts only through ``Actions``, which
carries the run's authority (its run token); the hub derives the topic from the run, so nothing a
brain writes can choose it. Streaming text goes to ``Stream`` as it is produced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from parley.actions.table import AGENT_TOOLS
from parley.brains.tail import Tail, stderr_tail

# Called with each piece of the reply as the brain produces it (for `parley chat`).
Stream = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class Said:
    """One earlier or new piece of text in the session: who said it, and what."""

    author: str
    text: str
    # What a turn had said when it was stopped, failed or interrupted: not a finished reply.
    cut_short: bool = False


@dataclass(frozen=True)
class OutsideTool:
    """A tool of one of the agent's MCP servers, offered as ``server.tool``: its own
    description and argument schema; called through ``Actions.act`` under that name."""

    name: str
    description: str
    schema: Mapping[str, object]


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
    # In an agent conversation, the other role: the reply is sent to it. Else None.
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
    tools: tuple[str, ...] = field(default=AGENT_TOOLS)
    # The tools of its MCP servers, as its node listed them at this turn's start.
    outside_tools: tuple[OutsideTool, ...] = ()
    # Variables an owner declared for the agent (command brains): values given, and names whose
    # values the node's environment gives at this turn.
    env: Mapping[str, str] = field(default_factory=dict)
    env_from_server: tuple[str, ...] = ()
    # Where a brain with a process (command) puts what it writes on stderr: the node keeps it
    # on the run however the turn ends, even when it is cancelled.
    stderr: Tail = field(default_factory=stderr_tail, compare=False)


@dataclass(frozen=True)
class TurnOutcome:
    # The turn's own answer, for whoever the turn answers: the person in a conversation, the
    # task's log, or in an agent conversation the other agent. Empty: nothing is sent.
    reply: str
    brain_session_id: str | None = None


class Actions(Protocol):
    """Everything a run may do: the actions of ``parley.actions.table``, each checked by the hub
    against the run's token.

    ``act`` checks the arguments against the table, returns a short confirmation for the brain
    (an LLM sees it as the tool's result) and raises a ParleyError subclass when refused (an
    argument the action does not take, an unknown agent, a retired recipient, …).
    """

    async def act(self, name: str, arguments: Mapping[str, object]) -> str: ...


class Brain(Protocol):
    async def think(self, turn: Turn, actions: Actions, stream: Stream) -> TurnOutcome:
        """Run one turn. Cancelling the task that awaits this must end all of its work."""
