"""The actions of a run, each once: its name, parameters (kind, help), help, and whether a node
session may use it. A parameter's kind says its type and how each surface presents it.

Two families share the table. Parley's own actions (send, report, spawn, …) act for the run at
the hub and every run has them (a node session fewer). Workspace tools (read, write, list, edit,
find, run) act in the agent's workspace on its node, and a run has those its agent's tool list
names (``agents/tools.py``)."""

from __future__ import annotations

import json
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
    # A path relative to the agent's workspace: positional on the command line.
    PATH = "path"

    @property
    def python_type(self) -> type[str] | type[bool]:
        return bool if self is Kind.FLAG else str

    @property
    def json_type(self) -> str:
        return "boolean" if self is Kind.FLAG else "string"


# A name, or name@connection for a peer's role: a name is at most 40 characters.
MAX_ADDRESS = 128
# A path in a workspace, as Linux bounds one (PATH_MAX).
MAX_PATH = 4096
# What a write or an edit may carry: the tools refuse a file past their own byte cap too.
MAX_CONTENT = 1024 * 1024
MAX_COMMAND = 16 * 1024
MAX_SEARCH = 1000


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    help: str
    # The longest a text may be, when not the kind's usual cap.
    cap: int | None = None
    # A value as /docs shows it; a flag's is its default.
    example: str | bool = False
    # What an absent text or path is, which makes it optional (a folder: "." the workspace).
    fallback: str | None = None

    @property
    def max_length(self) -> int | None:
        if self.kind is Kind.FLAG:
            return None
        return self.cap or _USUAL_CAPS[self.kind]

    @property
    def required(self) -> bool:
        return self.kind is not Kind.FLAG and self.fallback is None

    @property
    def default(self) -> str | bool | None:
        """What an absent optional parameter is (a flag: false); None for a required one."""
        if self.kind is Kind.FLAG:
            return False
        return self.fallback

    def shown_in_signature(self) -> str:
        if self.required:
            return self.name
        return f"{self.name}={json.dumps(self.default)}"


_USUAL_CAPS = {Kind.NAME: MAX_ADDRESS, Kind.TEXT: MAX_TEXT, Kind.PATH: MAX_PATH}


@dataclass(frozen=True)
class Action:
    name: str
    help: str
    params: tuple[Param, ...]
    # A node session answers and relays; it does not own tasks or post into people's
    # conversations, so its tool list is narrower than a hired agent's.
    node_session: bool = False
    # A workspace tool: it acts in the agent's workspace, on the agent's node, when the agent's
    # tool list names it; Parley's own actions act at the hub for every run.
    in_workspace: bool = False

    @property
    def path(self) -> str:
        """Its name in a URL and on the command line: /act/ask-node, parley act ask-node."""
        return self.name.replace("_", "-")

    def signature(self) -> str:
        """``spawn(agent, text, thread=false)``: how a prompt shows it."""
        shown = [p.shown_in_signature() for p in self.params]
        return f"{self.name}({', '.join(shown)})"

    def described(self) -> str:
        """One line for a prompt's list of tools."""
        return f"{self.signature()}: {self.help}"

    def command_line(self) -> str:
        """``parley act spawn AGENT TEXT [--thread]``: how a command brain's prompt shows it."""
        shown = [_on_command_line(p) for p in self.params]
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


def _on_command_line(param: Param) -> str:
    if param.kind is Kind.FLAG:
        return f"[--{param.name}]"
    return param.name.upper() if param.required else f"[{param.name.upper()}]"


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

_WORKSPACE = "a path in your workspace"


WORKSPACE_ACTIONS = _table(
    Action(
        "read",
        "read a text file of your workspace",
        (Param("path", Kind.PATH, _WORKSPACE, example="notes/plan.md"),),
        in_workspace=True,
    ),
    Action(
        "list",
        "list a folder of your workspace (folders end with /)",
        (Param("path", Kind.PATH, _WORKSPACE, fallback=".", example="notes"),),
        in_workspace=True,
    ),
    Action(
        "find",
        "find lines holding a text (exactly, not a pattern) in the files under a folder",
        (
            Param("text", Kind.TEXT, "the text to find", cap=MAX_SEARCH, example="TODO"),
            Param("path", Kind.PATH, _WORKSPACE, fallback=".", example="."),
        ),
        in_workspace=True,
    ),
    Action(
        "write",
        "write a text file of your workspace, whole (its folders are made)",
        (
            Param("path", Kind.PATH, _WORKSPACE, example="notes/plan.md"),
            Param("content", Kind.TEXT, "the file's text", cap=MAX_CONTENT, example="# Plan\n"),
        ),
        in_workspace=True,
    ),
    Action(
        "edit",
        "replace a span of a text file that occurs in it exactly once",
        (
            Param("path", Kind.PATH, _WORKSPACE, example="notes/plan.md"),
            Param("old", Kind.TEXT, "the text to replace", cap=MAX_CONTENT, example="# Plan"),
            Param("new", Kind.TEXT, "what replaces it", cap=MAX_CONTENT, example="# The plan"),
        ),
        in_workspace=True,
    ),
    Action(
        "run",
        "run a shell command in your workspace; you read its exit code and output",
        (Param("command", Kind.TEXT, "the command line", cap=MAX_COMMAND, example="ls -la"),),
        in_workspace=True,
    ),
)
ACTIONS.update(WORKSPACE_ACTIONS)

# What every hired agent's run may do, and a node session's (a narrower list): Parley's actions.
AGENT_TOOLS = tuple(name for name, action in ACTIONS.items() if not action.in_workspace)
NODE_SESSION_TOOLS = tuple(name for name in AGENT_TOOLS if ACTIONS[name].node_session)
# The workspace tools, and those a new agent's list holds: reading changes nothing.
WORKSPACE_TOOLS = tuple(WORKSPACE_ACTIONS)
READ_ONLY_TOOLS = ("read", "list", "find")
