"""What crosses the broker between hub and nodes. Pydantic models: validated on arrival."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from parley.actions.arguments import bind
from parley.errors import Invalid
from parley.naming import is_name

# Each node registers and beats on subjects of its own (the broker lets its credentials publish
# there only); the hub listens on the wildcards and hears the node's name from the subject.
REGISTER = "parley.mesh.register.*"
# The most tool calls one turn may make (past it, a call is refused): a model looping on tools
# is bounded, and a turn's end, which carries its calls, stays well inside a broker message.
MAX_TOOL_CALLS = 100
# A call's arguments and error as kept on its run, at most (texts within are shortened first).
MAX_CALL_TEXT = 1000
HEARTBEAT = "parley.mesh.heartbeat.*"


def register_subject(node: str) -> str:
    return f"parley.mesh.register.{node}"


def heartbeat_subject(node: str) -> str:
    return f"parley.mesh.heartbeat.{node}"


def provision_subject(node: str) -> str:
    return f"parley.node.{node}.provision"


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Register(Message):
    node: str
    hostname: str
    workspace_root: str
    # One process's life as the node (``parley node join`` once): another under the same name
    # is another instance, refused while this one is online unless it comes to ``replace`` it.
    instance: str
    pid: int
    replace: bool = False
    # The node's key (its credentials' public key), when it signed this (unix milliseconds),
    # and its signature over everything else (``signed_text``): a name belongs to its key.
    public_key: str
    signed_at: int
    signature: str = ""

    def signed_text(self) -> bytes:
        """What the signature covers: every field but the signature, in a fixed form."""
        fields = self.model_dump(exclude={"signature"})
        return b"parley-register-v1\n" + json.dumps(fields, sort_keys=True).encode()


class RegisterReply(Message):
    accepted: bool
    reason: str = ""
    # Refused because another instance holds the name (a conflict, not a wrong token).
    taken: bool = False


class Heartbeat(Message):
    node: str
    instance: str = ""  # "": not said (heard as the node's, whichever instance holds it)


def instance_subject(node: str) -> str:
    """Where the instance that is the node says which it is (nobody there: it is gone)."""
    return f"parley.node.{node}.instance"


class InstanceReply(Message):
    instance: str


def taken_over_subject(node: str) -> str:
    """Where the hub tells the instances of a node that another took its name."""
    return f"parley.node.{node}.taken-over"


class TakenOver(Message):
    """The instance that holds the node's name now; any other stops being the node."""

    instance: str
    hostname: str = ""
    pid: int | None = None


class Provision(Message):
    agent: str


class ProvisionReply(Message):
    workspace: str


def brain_check_subject(node: str) -> str:
    """Where the hub asks a node whether a brain can run there (its file, its key)."""
    return f"parley.node.{node}.check-brain"


class BrainCheck(Message):
    brain: str
    allow_missing_key: bool


class BrainCheckReply(Message):
    refused: str | None = None
    notices: list[str] = []


# Turns: the hub starts a turn on the agent's node, the node reports its events back, the hub
# stops a turn by run id.

# A node reports on subjects of its own, which only it may publish on (the broker's
# permissions): the subject an end or a chunk came on names the node that sent it.


def run_events_subject(node: str) -> str:
    """Reply chunks, on a core subject: they are for whoever watches the turn live, and the
    whole reply comes with the turn's end; a chunk lost while the broker is away costs nothing
    else."""
    return f"parley.hub.run-events.{node}"


def run_outcomes_subject(node: str) -> str:
    """How turns ended, on a durable subject (read by the hub's one consumer of every node's,
    ``HUB_CONSUMER``): an ending must be recorded once, however the hub, the broker or the node
    fared meanwhile."""
    return f"parley.hub.run-outcomes.{node}"


RUN_EVENTS_OF_EVERY_NODE = run_events_subject("*")
RUN_OUTCOMES_OF_EVERY_NODE = run_outcomes_subject("*")
HUB_CONSUMER = "hub-by-node"
# Where every node stored its ends before each had a subject of its own, read by the consumer
# that read it then: what an upgraded hub finds stored there names no node, and is dropped.
RUN_OUTCOMES_OF_NO_NODE = "parley.hub.run-outcomes"
EARLIER_HUB_CONSUMER = "hub"


def node_of(subject: str, per_node: Callable[[str], str]) -> str | None:
    """The node whose ``per_node`` subject ``subject`` is (``per_node`` makes one of that kind
    from a node's name, as ``run_outcomes_subject``); None if it is no such subject."""
    prefix = per_node("")
    node = subject.removeprefix(prefix)
    return node if subject.startswith(prefix) and is_name(node) else None


def turn_subject(node: str) -> str:
    return f"parley.node.{node}.turn"


def stop_subject(node: str) -> str:
    return f"parley.node.{node}.stop"


class SaidText(Message):
    author: str
    text: str
    # What a turn had said when it was stopped, failed or interrupted (hub/cut_short.py).
    cut_short: bool = False


class McpServerGiven(Message):
    """An MCP server of the turn's agent, as its node starts it (``agents/mcp.py``)."""

    name: str
    command: str | None = None
    url: str | None = None
    headers_from_env: dict[str, str] = {}


class TurnStart(Message):
    run_id: int
    agent: str
    brain: str
    engram: str
    memory: list[str]
    history: list[SaidText]
    new_text: list[SaidText]
    root: str
    counterpart: str | None
    was_stopped: bool
    brain_session_id: str | None
    workspace: str | None
    run_token: str
    parley_url: str
    tools: list[str]
    # The agent's declared variables: values, and names the node's environment gives.
    env: dict[str, str] = {}
    env_from_server: list[str] = []
    # The session the run belongs to: an agent's MCP servers are kept for one session.
    session_id: int = 0
    mcp_servers: list[McpServerGiven] = []
    # Its tools that wait for a person's approval before each call (agents/tools.py).
    ask: list[str] = []


class StopTurn(Message):
    run_id: int


def held_subject(node: str) -> str:
    """Where a hub back from a stop asks a node which turns it still runs."""
    return f"parley.node.{node}.held"


class HeldTurns(Message):
    run_ids: list[int]


class ActionCall(Message):
    """One deferred action, as the table (``parley.actions.table``) defines it."""

    name: str
    arguments: dict[str, str | bool]

    @model_validator(mode="after")
    def _as_the_table_defines_it(self) -> ActionCall:
        try:
            bind(self.name, self.arguments)
        except Invalid as exc:
            raise ValueError(exc.message) from None
        return self


class ToolCallRecord(Message):
    """One call a turn made to a tool (an action of the table), as its run keeps it: enough
    to follow what it did, never what a secret was, nor a whole file it wrote."""

    tool: str = Field(max_length=64)
    # The arguments as JSON, long texts shortened and secrets redacted.
    arguments: str = Field(max_length=MAX_CALL_TEXT)
    result_bytes: int = Field(ge=0)
    duration_ms: int = Field(ge=0)
    # Why it was refused or failed; None when it worked.
    error: str | None = Field(None, max_length=MAX_CALL_TEXT)
    # How much of the turn's reply had streamed when it was called: where it sits in the text.
    after_chars: int = Field(ge=0)


class RunEvent(Message):
    run_id: int
    # "stopped": the node ended a turn the hub had stopped, or that its own stop cut short (it
    # brings the turn's stderr and what it had said so far). "tool": a tool call, as it ends.
    kind: Literal["chunk", "tool", "finished", "failed", "stopped"]
    text: str = ""
    # The last of what the brain's process wrote on stderr (command brains), on an ending.
    stderr: str | None = None
    # On a "failed" or "stopped" ending: the last of what the turn had said of its reply so far
    # (what it streamed), kept on the run marked as cut short.
    said_so_far: str | None = None
    brain_session_id: str | None = None
    # Actions the brain deferred to the end of its turn, applied with the outcome under the
    # authority of the run's token.
    actions: list[ActionCall] = []
    # A "tool" event's call; on an ending, every call of the turn in order (kept on the run).
    tool_call: ToolCallRecord | None = None
    tool_calls: list[ToolCallRecord] = Field([], max_length=MAX_TOOL_CALLS)
    # On an ending: the run's token, proof that its node held the turn (hub/end_checks.py).
    run_token: str | None = None
    # On an ending: the hash of the run token this start of the run was given. A run its node
    # did not take in time goes back to waiting and starts again with another token; a late end
    # of the earlier start must not end the later one. The hub takes no end without it.
    started_as: str | None = None

    @property
    def is_end(self) -> bool:
        return self.kind not in ("chunk", "tool")

    @property
    def message_id(self) -> str:
        """The same for every copy of one start's end: the broker stores it once."""
        return f"run-{self.run_id}-{(self.started_as or '')[:16]}-{self.kind}"
