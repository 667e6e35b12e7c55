"""The actions of a run, each once: its name, parameters (kind, help), help, and whether a node
session may use it. A parameter's kind says its type and how each surface presents it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from parley.text import MAX_NOTE, MAX_TEXT

# Arguments of one action once checked (see arguments.py): every parameter, defaults filled in.
Arguments = dict[str, str | bool]


class Kind(Enum):
    # The name of an agent or a node: short; a positional argument on the command line.
    NAME = "name"
    # Free text: positional on the command line, where "-" reads it from stdin.
    TEXT = "text"
    # Yes or no, no unless given: an option (--thread) on the command line.
    FLAG = "flag"

    @property
    def python_type(self) -> type[str] | type[bool]:
        return bool if self is Kind.FLAG else str

    @property
    def json_type(self) -> str:
        return "boolean" if self is Kind.FLAG else "string"


# A name, or name@connection for a peer's role: a name is at most 40 characters.
MAX_ADDRESS = 128


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    help: str
    # The longest a text may be, when not the kind's usual cap.
    cap: int | None = None
    # A value as /docs shows it; a flag's is its default.
    example: str | bool = False

    @property
    def max_length(self) -> int | None:
        if self.kind is Kind.FLAG:
            return None
        return self.cap or (MAX_ADDRESS if self.kind is Kind.NAME else MAX_TEXT)

    @property
    def required(self) -> bool:
        return self.kind is not Kind.FLAG

    @property
    def default(self) -> bool | None:
        """What an absent optional parameter is (a flag: false); None for a required one."""
        return None if self.required else False


@dataclass(frozen=True)
class Action:
    name: str
    help: str
    params: tuple[Param, ...]
    # A node session answers and relays; it does not own tasks or post into people's
    # conversations, so its tool list is narrower than a hired agent's.
    node_session: bool = False

    @property
    def path(self) -> str:
        """Its name in a URL and on the command line: /act/ask-node, parley act ask-node."""
        return self.name.replace("_", "-")

    def signature(self) -> str:
        """``spawn(agent, text, thread=false)``: how a prompt shows it."""
        shown = [p.name if p.required else f"{p.name}=false" for p in self.params]
        return f"{self.name}({', '.join(shown)})"

    def described(self) -> str:
        """One line for a prompt's list of tools."""
        return f"{self.signature()}: {self.help}"

    def command_line(self) -> str:
        """``parley act spawn AGENT TEXT [--thread]``: how a command brain's prompt shows it."""
        shown = [p.name.upper() if p.required else f"[--{p.name}]" for p in self.params]
        return " ".join(["parley act", self.path, *shown])

    def described_as_command(self) -> str:
        """One line for a command brain's list of commands."""
        return f"{self.command_line()}: {self.help}"

    def json_schema(self) -> dict[str, Any]:
        """Its parameters as a JSON schema object (a model's tool definition)."""
        return {
            "type": "object",
            "properties": {p.name: _property(p) for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }


def _property(param: Param) -> dict[str, Any]:
    shown: dict[str, Any] = {"type": param.kind.json_type, "description": param.help}
    if param.max_length is not None:
        shown["maxLength"] = param.max_length
    return shown


def _table(*actions: Action) -> dict[str, Action]:
    return {action.name: action for action in actions}


ACTIONS = _table(
    Action(
        "send",
        "send text to another agent; answers arrive as new text",
        (
            Param(
                "to",
                Kind.NAME,
                "a local agent's name, or name@connection for a peer's role",
                example="clerk",
            ),
            Param("text", Kind.TEXT, "what to send", example="How many spoons are there?"),
        ),
        node_session=True,
    ),
    Action(
        "report",
        "post text where this work comes from (the person's conversation or the task)",
        (Param("text", Kind.TEXT, "what to post", example="The clerk counted 42 spoons."),),
    ),
    Action(
        "spawn",
        "give an agent a subtask of this run's work; its result arrives as new text. A subtask"
        " is a topic of its own: every member reads it",
        (
            Param("agent", Kind.NAME, "the agent to give it to", example="clerk"),
            Param("text", Kind.TEXT, "the subtask", example="count the spoons"),
            Param("thread", Kind.FLAG, "bind the subtask to a thread of its own"),
        ),
    ),
    Action(
        "complete",
        "finish the task this run works on, with its result",
        (
            Param("result", Kind.TEXT, "the task's result", example="42 spoons"),
            Param("failed", Kind.FLAG, "the task failed"),
        ),
    ),
    Action(
        "remember",
        "add a note to your own long-term memory, which every member reads",
        (Param("note", Kind.TEXT, "the note", cap=MAX_NOTE, example="The kettle is broken."),),
        node_session=True,
    ),
    Action(
        "ask_node",
        "ask a node's own session; its answer arrives as new text. Every member reads what a"
        " node is asked",
        (
            Param("node", Kind.NAME, "the node", example="local"),
            Param("text", Kind.TEXT, "the question", example="How much disk is free?"),
        ),
        node_session=True,
    ),
)

# What a hired agent's run may do, and a node session's (a narrower list).
AGENT_TOOLS = tuple(ACTIONS)
NODE_SESSION_TOOLS = tuple(name for name, action in ACTIONS.items() if action.node_session)
