"""Agents: hiring, the lifecycle verbs, policy and memory."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from parley.actions.table import WORKSPACE_TOOLS
from parley.agents.hiring import MAX_SESSIONS_LIMIT, MAX_SURGE_THRESHOLD
from parley.agents.mcp import MAX_SERVERS, MAX_TARGET
from parley.agents.model import Agent, AgentWarning, McpServer, MemoryNote, SettingChange
from parley.agents.tools import DEFAULT_TOOLS, MAX_ASK
from parley.api.schemas.base import NAME, Body, capped, example, ranged
from parley.brains.spec import MAX_BRAIN_SPEC
from parley.durations import format_duration
from parley.text import MAX_ENGRAM, MAX_NOTE, MAX_REASON

ENV_HELP = "variables for its command brain, NAME: VALUE (stored; shown by name only)"
ENV_FROM_SERVER_HELP = "names its command brain takes from the server's environment at each turn"
TOOLS_HELP = (
    f"its workspace tools, of {', '.join(WORKSPACE_TOOLS)}; a new agent has the read-only ones"
    f" ({', '.join(DEFAULT_TOOLS)})"
)
# Each tool at most once: a longer list is a mistake, not a wish.
_MAX_TOOLS = len(WORKSPACE_TOOLS)
ALLOW_MISSING_KEY_HELP = (
    "accept an openai: or anthropic: brain whose API key this server lacks (with a notice)"
)


class McpServerIn(Body):
    """An MCP server of the agent: a command its node starts (stdio) or a URL (streamable
    HTTP), one of them; a header's value is read from the node's environment by name."""

    model_config = example(name="search", url="https://mcp.example.com/mcp",
                           headers_from_env={"Authorization": "SEARCH_TOKEN"})  # fmt: skip

    name: str = Field(json_schema_extra=capped(32, 1))
    command: str | None = Field(None, json_schema_extra=capped(MAX_TARGET, 1))
    url: str | None = Field(None, json_schema_extra=capped(MAX_TARGET, 1))
    headers_from_env: dict[str, str] = Field(
        {}, description="header name: the name of the node's environment variable holding it"
    )

    def server(self) -> McpServer:
        headers = tuple(sorted(self.headers_from_env.items()))
        return McpServer(self.name, self.command, self.url, headers)


class McpServerOut(BaseModel):
    name: str
    command: str | None
    url: str | None
    headers_from_env: dict[str, str]

    @classmethod
    def of(cls, server: McpServer) -> McpServerOut:
        return cls(
            name=server.name,
            command=server.command,
            url=server.url,
            headers_from_env=dict(server.headers),
        )


MCP_HELP = "its own MCP servers; their tools are offered to its model brain as NAME.tool"
ASK_HELP = (
    "its tools that wait for a person's approval before each call: workspace tools, its MCP"
    " servers (every tool of one) or SERVER.tool; a new agent asks before run"
)


class HireIn(Body):
    model_config = example(
        name="scribe", node="local", engram="You keep the minutes.", brain="offline", max_sessions=2
    )

    name: str = Field(json_schema_extra=NAME)
    node: str = Field(json_schema_extra=NAME)
    engram: str = Field("", json_schema_extra=capped(MAX_ENGRAM))
    brain: str | None = Field(
        None,
        description="offline, scripted:FILE, openai:MODEL, anthropic:MODEL, command:LINE",
        json_schema_extra=capped(MAX_BRAIN_SPEC),
    )
    max_sessions: int = Field(1, json_schema_extra=ranged(1, MAX_SESSIONS_LIMIT))
    template: bool = False
    surge_threshold: int | None = Field(None, json_schema_extra=ranged(1, MAX_SURGE_THRESHOLD))
    clone_lifetime: str | None = Field(
        None, description="e.g. 30m, 2h, 1d; at most ten years", json_schema_extra=capped(64)
    )
    human: str | None = Field(
        None, description="the person who answers for a human agent", json_schema_extra=NAME
    )
    env: dict[str, str] = Field({}, description=ENV_HELP)
    env_from_server: list[str] = Field([], description=ENV_FROM_SERVER_HELP)
    tools: list[str] | None = Field(None, description=TOOLS_HELP, max_length=_MAX_TOOLS)
    mcp: list[McpServerIn] = Field([], description=MCP_HELP, max_length=MAX_SERVERS)
    ask: list[str] | None = Field(None, description=ASK_HELP, max_length=MAX_ASK)
    allow_missing_key: bool = Field(False, description=ALLOW_MISSING_KEY_HELP)


class AgentPatch(Body):
    """``PATCH /agents/{name}``: what is given changes, what is left out stays; it applies from
    the agent's next turn. A node session takes only ``brain``, ``tools`` and variables."""

    model_config = example(
        engram="You keep the minutes of the team's meetings.",
        max_sessions=2,
        env={"MINUTES_DIR": "/srv/minutes"},
        env_from_server=["OPENAI_API_KEY"],
        unset_env=[],
    )

    engram: str | None = Field(None, json_schema_extra=capped(MAX_ENGRAM))
    brain: str | None = Field(
        None,
        description="offline, scripted:FILE, openai:MODEL, anthropic:MODEL, command:LINE",
        json_schema_extra=capped(MAX_BRAIN_SPEC),
    )
    max_sessions: int | None = Field(
        None,
        description="lowered below the sessions running, it stops none: no new turn starts"
        " until fewer run",
        json_schema_extra=ranged(1, MAX_SESSIONS_LIMIT),
    )
    env: dict[str, str] = Field({}, description=ENV_HELP)
    env_from_server: list[str] = Field([], description=ENV_FROM_SERVER_HELP)
    unset_env: list[str] = Field([], description="names of variables no longer declared")
    tools: list[str] | None = Field(
        None,
        description="its workspace tools, the whole list (an empty one: none); a node session"
        " runs commands only where the operator grants it",
        max_length=_MAX_TOOLS,
    )
    ask: list[str] | None = Field(
        None,
        description=ASK_HELP + "; the whole list (an empty one: nothing asks)",
        max_length=MAX_ASK,
    )
    mcp: list[McpServerIn] = Field(
        [], description="MCP servers added, or replacing theirs by name", max_length=MAX_SERVERS
    )
    unset_mcp: list[str] = Field(
        [], description="names of MCP servers removed", max_length=MAX_SERVERS
    )
    allow_missing_key: bool = Field(False, description=ALLOW_MISSING_KEY_HELP)


class ReassignIn(Body):
    model_config = example(node="beta")

    node: str = Field(json_schema_extra=NAME)


class RetireIn(Body):
    model_config = example(force=False, reason="The project is over.")

    force: bool = False
    reason: str | None = Field(None, json_schema_extra=capped(MAX_REASON))


class WarnIn(Body):
    model_config = example(reason="Sent the minutes to the wrong list.")

    reason: str = Field(json_schema_extra=capped(MAX_REASON, 1))


class CloneIn(Body):
    model_config = example(name="researcher-7", lifetime="2h")

    name: str | None = Field(None, json_schema_extra=NAME)
    lifetime: str | None = Field(None, json_schema_extra=capped(64))


class NoteIn(Body):
    model_config = example(note="Minutes go to the shared folder by Friday.")

    note: str = Field(json_schema_extra=capped(MAX_NOTE, 1))


class AgentOut(BaseModel):
    name: str
    kind: str
    node: str
    lifecycle: str
    modality: str
    human: str | None
    engram: str
    brain: str
    max_sessions: int
    template: bool
    surge_threshold: int | None
    clone_lifetime: str | None
    clone_of: str | None
    expires_at: datetime | None
    workspace: str | None
    retired_reason: str | None
    retired_at: datetime | None
    created_at: datetime
    warnings: int
    env: list[str] = Field(description="its command brain's declared variables, by name")
    env_from_server: list[str] = Field(description="those it takes from the server's environment")
    tools: list[str] = Field(description="its workspace tools")
    mcp: list[McpServerOut] = Field(description=MCP_HELP)
    ask: list[str] = Field(description=ASK_HELP)
    notices: list[str] = Field(
        [], description="warnings about the request just made, such as a missing API key"
    )

    @classmethod
    def of(cls, agent: Agent) -> AgentOut:
        lifetime = agent.clone_lifetime_seconds
        return cls(
            name=agent.name,
            kind=agent.kind.value,
            node=agent.node_name,
            lifecycle=agent.lifecycle.value,
            modality=agent.modality.value,
            human=agent.human_person,
            engram=agent.engram,
            brain=agent.brain,
            max_sessions=agent.max_sessions,
            template=agent.is_template,
            surge_threshold=agent.surge_threshold,
            clone_lifetime=format_duration(lifetime) if lifetime is not None else None,
            clone_of=agent.template_name,
            expires_at=agent.expires_at,
            workspace=agent.workspace,
            retired_reason=agent.retired_reason,
            retired_at=agent.retired_at,
            created_at=agent.created_at,
            warnings=agent.warning_count,
            env=list(agent.env),
            env_from_server=list(agent.env_from_server),
            tools=list(agent.tools),
            mcp=[McpServerOut.of(server) for server in agent.mcp_servers],
            ask=list(agent.ask),
        )


class WarnOut(BaseModel):
    agent: AgentOut
    warnings: int
    dismissed: bool


class MemoryOut(BaseModel):
    id: int
    note: str
    written_by: str | None = Field(description="the person who wrote it; none if a run did")
    run_id: int | None = Field(description="the run that wrote it")
    topic_kind: str | None = Field(description="the kind of topic that run was working in")
    origin: str = Field(description="who wrote it, in words: a person, or a run and where")
    written_at: datetime

    @classmethod
    def of(cls, note: MemoryNote) -> MemoryOut:
        return cls(
            id=note.id,
            note=note.note,
            written_by=note.written_by,
            run_id=note.run_id,
            topic_kind=note.topic_kind,
            origin=note.origin,
            written_at=note.written_at,
        )


class WarningOut(BaseModel):
    id: int
    reason: str
    given_by: str | None
    given_at: datetime

    @classmethod
    def of(cls, warning: AgentWarning) -> WarningOut:
        return cls(
            id=warning.id,
            reason=warning.reason,
            given_by=warning.given_by,
            given_at=warning.given_at,
        )


class ChangeOut(BaseModel):
    """A setting an owner changed: variables by name only, never by value."""

    id: int
    agent: str
    setting: str
    old: str | None
    new: str | None
    changed_by: str | None
    changed_at: datetime

    @classmethod
    def of(cls, change: SettingChange) -> ChangeOut:
        return cls(
            id=change.id,
            agent=change.agent_name,
            setting=change.setting,
            old=change.old,
            new=change.new,
            changed_by=change.changed_by,
            changed_at=change.changed_at,
        )
