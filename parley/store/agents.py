"""Agent rows with their memory and warnings. Every query that picks an agent for work takes
the lifecycle states it accepts: there is no way to ask for 'an agent' without saying which."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, bindparam, delete, exists, func, insert, select, update

from parley.agents.model import (
    Agent,
    AgentKind,
    AgentVariable,
    AgentWarning,
    Lifecycle,
    McpServer,
    MemoryNote,
    Modality,
)
from parley.reads.model import Slice, Window
from parley.store.connection import Connection
from parley.store.keyset import sliced
from parley.store.rows import RowReader, member_of
from parley.store.shapes import once
from parley.store.tables import (
    agent_env,
    agent_memory,
    agent_warnings,
    agents,
    nodes,
    people,
    runs,
    topics,
)

_template = agents.alias("template")
_warning_count = (
    select(func.count())
    .where(agent_warnings.c.agent_id == agents.c.id)
    .correlate(agents)
    .scalar_subquery()
)


def _variable_names(from_server: bool) -> Any:
    return (
        select(func.aggregate_strings(agent_env.c.name, ","))
        .where(agent_env.c.agent_id == agents.c.id, agent_env.c.from_server.is_(from_server))
        .correlate(agents)
        .scalar_subquery()
    )


_open_runs = exists().where(runs.c.agent_id == agents.c.id, runs.c.state.in_(("queued", "running")))
_running_runs = exists().where(runs.c.agent_id == agents.c.id, runs.c.state == "running")


def _agent_query() -> Select[Any]:
    return (
        select(
            agents,
            nodes.c.name.label("node_name"),
            people.c.name.label("human_person"),
            _template.c.name.label("template_name"),
            _warning_count.label("warning_count"),
            _variable_names(False).label("env_names"),
            _variable_names(True).label("env_from_server_names"),
        )
        .join(nodes, nodes.c.id == agents.c.node_id)
        .outerjoin(people, people.c.id == agents.c.human_person_id)
        .outerjoin(_template, _template.c.id == agents.c.template_id)
    )


def _listed(joined: str | None) -> tuple[str, ...]:
    return tuple(joined.split(",")) if joined else ()


def _mcp_servers(text: str | None) -> tuple[McpServer, ...]:
    """An agent's MCP servers as stored: a JSON list (``_as_json``), most often empty."""
    if not text or text == "[]":
        return ()
    return tuple(
        McpServer(
            item["name"],
            item.get("command"),
            item.get("url"),
            tuple(sorted(item.get("headers_from_env", {}).items())),
        )
        for item in json.loads(text)
    )


def _as_json(servers: Sequence[McpServer]) -> str:
    return json.dumps(
        [
            {
                "name": server.name,
                **({"command": server.command} if server.command is not None else {}),
                **({"url": server.url} if server.url is not None else {}),
                "headers_from_env": dict(server.headers),
            }
            for server in servers
        ]
    )


def _column_values(values: dict[str, Any]) -> dict[str, Any]:
    """Values as the columns take them: MCP servers as their JSON."""
    if "mcp_servers" in values:
        values = {**values, "mcp_servers": _as_json(values["mcp_servers"])}
    return values


def _names(joined: str | None) -> tuple[str, ...]:
    return tuple(sorted(joined.split(","))) if joined else ()


# Picked by position (rows.py): an agent read by column name cost 27 lookups of a Row by name,
# and its states went through Enum's call, on every agent a turn's start or a text reads.
_AGENTS = RowReader(
    Agent,
    convert={
        "kind": member_of(AgentKind),
        "lifecycle": member_of(Lifecycle),
        "modality": member_of(Modality),
        "is_template": bool,
        "warning_count": int,
        "env": _names,
        "env_from_server": _names,
        "tools": _listed,
        "ask": _listed,
        "mcp_servers": _mcp_servers,
    },
    sources={"env": "env_names", "env_from_server": "env_from_server_names"},
)
# One row alone, as the batch reads read each.
_agent = _AGENTS.one


_BY_ID = once(_agent_query().where(agents.c.id == bindparam("agent_id")))
_BY_IDS = once(_agent_query().where(agents.c.id.in_(bindparam("agent_ids", expanding=True))))
_BY_NAME = once(_agent_query().where(agents.c.name == bindparam("name")))
_NAMES = once(select(agents.c.name).where(agents.c.lifecycle != "retired"))
_RECEIVABLE = once(
    _agent_query().where(
        agents.c.name == bindparam("name"),
        agents.c.lifecycle.in_(bindparam("states", expanding=True)),
        agents.c.is_template.is_(False),
    )
)
_RECEIVABLE_NAMED = once(
    _agent_query().where(
        agents.c.name.in_(bindparam("names", expanding=True)),
        agents.c.lifecycle.in_(bindparam("states", expanding=True)),
        agents.c.is_template.is_(False),
    )
)
# The sweepers' reads at every pass (and at every start): built once.
_AWAITING_WORKSPACE = once(
    _agent_query().where(
        agents.c.node_id == bindparam("node_id"),
        agents.c.kind == "agent",
        agents.c.lifecycle.in_(bindparam("states", expanding=True)),
        agents.c.workspace.is_(None),
    )
)
_EXPIRED_CLONES = once(
    _agent_query().where(
        agents.c.template_id.is_not(None),
        agents.c.expires_at <= bindparam("now"),
        agents.c.lifecycle.in_(bindparam("states", expanding=True)),
    )
)
_DRAINED = once(_agent_query().where(agents.c.lifecycle == Lifecycle.DRAINING.value, ~_open_runs))
_MEMORY_OF = (
    select(
        agent_memory,
        agents.c.name.label("agent_name"),
        people.c.name.label("author"),
        topics.c.kind.label("topic_kind"),
    )
    .join(agents, agents.c.id == agent_memory.c.agent_id)
    .outerjoin(people, people.c.id == agent_memory.c.written_by_person_id)
    .outerjoin(runs, runs.c.id == agent_memory.c.run_id)
    .outerjoin(topics, topics.c.id == runs.c.topic_id)
)
_MEMORY = _MEMORY_OF.where(agent_memory.c.agent_id == bindparam("agent_id")).order_by(
    agent_memory.c.id
)
_WARNINGS_OF = (
    select(agent_warnings, agents.c.name.label("agent_name"), people.c.name.label("author"))
    .join(agents, agents.c.id == agent_warnings.c.agent_id)
    .outerjoin(people, people.c.id == agent_warnings.c.given_by_person_id)
)


def _note(row: Any) -> MemoryNote:
    return MemoryNote(
        id=row.id,
        agent_name=row.agent_name,
        note=row.note,
        written_by=row.author,
        written_at=row.written_at,
        run_id=row.run_id,
        topic_kind=row.topic_kind,
    )


def _warning(row: Any) -> AgentWarning:
    return AgentWarning(
        id=row.id,
        agent_name=row.agent_name,
        reason=row.reason,
        given_by=row.author,
        given_at=row.given_at,
    )


_WORKING = (Lifecycle.HIRED, Lifecycle.ACTIVE)


def _states(states: Iterable[Lifecycle]) -> list[str]:
    return [state.value for state in states]


class AgentsRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def insert(self, **values: Any) -> int:
        result = await self._c.execute(
            insert(agents).values(kind="agent", **_column_values(values)).returning(agents.c.id)
        )
        return int(result.scalar_one())

    async def by_name(self, name: str) -> Agent | None:
        row = (await self._c.execute(_BY_NAME, {"name": name})).first()
        return _agent(row) if row else None

    async def names(self) -> list[str]:
        """The names of every agent and node session not retired (to suggest one)."""
        return [row.name for row in await self._c.execute(_NAMES)]

    async def by_id(self, agent_id: int) -> Agent | None:
        row = (await self._c.execute(_BY_ID, {"agent_id": agent_id})).first()
        return _agent(row) if row else None

    async def by_ids(self, agent_ids: Iterable[int]) -> dict[int, Agent]:
        wanted = list(agent_ids)
        if not wanted:
            return {}
        rows = await self._c.execute(_BY_IDS, {"agent_ids": wanted})
        return {agent.id: agent for agent in _AGENTS.all(rows)}

    async def page(self, window: Window, states: Sequence[Lifecycle] | None = None) -> Slice[Agent]:
        """Agents by name, retired ones included unless ``states`` says which."""
        query = _agent_query()
        if states:
            query = query.where(agents.c.lifecycle.in_(_states(states)))
        return await sliced(self._c, query, agents.c.name, window, _agent, newest_first=False)

    async def receivable(self, name: str, states: Sequence[Lifecycle]) -> Agent | None:
        """The agent ``name`` if it may take work in one of ``states``; templates never run."""
        parameters = {"name": name, "states": _states(states)}
        row = (await self._c.execute(_RECEIVABLE, parameters)).first()
        return _agent(row) if row else None

    async def receivable_named(
        self, names: Iterable[str], states: Sequence[Lifecycle]
    ) -> dict[str, Agent]:
        """``receivable`` for several names in one statement: those that may take work."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        parameters = {"names": wanted, "states": _states(states)}
        rows = await self._c.execute(_RECEIVABLE_NAMED, parameters)
        return {agent.name: agent for agent in _AGENTS.all(rows)}

    async def receivable_clones(self, template_id: int, states: Sequence[Lifecycle]) -> list[Agent]:
        """Clones of a template that may take work, least loaded first."""
        load = (
            select(func.count())
            .where(runs.c.agent_id == agents.c.id, runs.c.state.in_(("queued", "running")))
            .correlate(agents)
            .scalar_subquery()
        )
        query = (
            _agent_query()
            .where(agents.c.template_id == template_id, agents.c.lifecycle.in_(_states(states)))
            .order_by(load, agents.c.id)
        )
        return _AGENTS.all(await self._c.execute(query))

    async def move_lifecycle(
        self,
        agent_id: int,
        allowed_from: Sequence[Lifecycle],
        to: Lifecycle,
        **values: Any,
    ) -> bool:
        """Change state only if the agent is still in one of ``allowed_from`` (safe under races)."""
        result = await self._c.execute(
            update(agents)
            .where(agents.c.id == agent_id, agents.c.lifecycle.in_(_states(allowed_from)))
            .values(lifecycle=to.value, **values)
        )
        return result.rowcount == 1

    async def move_if_idle(self, agent_id: int, node_id: int, states: Sequence[Lifecycle]) -> bool:
        """Reassign in one statement, so that a turn starting meanwhile cannot slip in between.
        Queued text moves with the agent: it starts once the new node has made the workspace."""
        result = await self._c.execute(
            update(agents)
            .where(
                agents.c.id == agent_id,
                agents.c.lifecycle.in_(_states(states)),
                ~_running_runs,
            )
            .values(node_id=node_id, workspace=None)
        )
        return result.rowcount == 1

    async def set_settings(self, agent_id: int, **values: Any) -> None:
        """Change the engram, brain, max sessions, tools or MCP servers; the next turn reads
        them."""
        changed = _column_values(values)
        await self._c.execute(update(agents).where(agents.c.id == agent_id).values(**changed))

    async def set_workspace(self, agent_id: int, workspace: str) -> None:
        await self._c.execute(
            update(agents).where(agents.c.id == agent_id).values(workspace=workspace)
        )

    async def awaiting_workspace(self, node_id: int) -> list[Agent]:
        parameters = {"node_id": node_id, "states": _states(_WORKING)}
        return _AGENTS.all(await self._c.execute(_AWAITING_WORKSPACE, parameters))

    async def expired_clones(self, now: datetime) -> list[Agent]:
        parameters = {"now": now, "states": _states(_WORKING)}
        return _AGENTS.all(await self._c.execute(_EXPIRED_CLONES, parameters))

    async def drained(self) -> list[Agent]:
        """Draining agents with nothing left queued or running: ready to be retired."""
        return _AGENTS.all(await self._c.execute(_DRAINED))

    async def count_clones(self, template_id: int) -> int:
        query = select(func.count()).where(agents.c.template_id == template_id)
        return int((await self._c.execute(query)).scalar_one())

    async def variables(self, agent_ids: Iterable[int]) -> dict[int, list[AgentVariable]]:
        """The declared variables of these agents, values included (for their turns only)."""
        query = (
            select(agent_env)
            .where(agent_env.c.agent_id.in_(list(agent_ids)))
            .order_by(agent_env.c.agent_id, agent_env.c.name)
        )
        found: dict[int, list[AgentVariable]] = {}
        for row in await self._c.execute(query):
            found.setdefault(row.agent_id, []).append(AgentVariable(row.name, row.value))
        return found

    async def set_variables(self, agent_id: int, variables: Sequence[AgentVariable]) -> None:
        """Declare ``variables``, replacing any declared before under the same names."""
        if not variables:
            return
        await self.unset_variables(agent_id, [variable.name for variable in variables])
        await self._c.execute(
            insert(agent_env),
            [
                {
                    "agent_id": agent_id,
                    "name": variable.name,
                    "value": variable.value,
                    "from_server": variable.from_server,
                }
                for variable in variables
            ],
        )

    async def unset_variables(self, agent_id: int, names: Sequence[str]) -> None:
        if names:
            await self._c.execute(
                delete(agent_env).where(
                    agent_env.c.agent_id == agent_id, agent_env.c.name.in_(list(names))
                )
            )

    async def add_memory(
        self,
        agent_id: int,
        note: str,
        person_id: int | None,
        now: datetime,
        run_id: int | None = None,
    ) -> MemoryNote:
        """A note written by a person (``person_id``) or by a run (``run_id``)."""
        written = await self._c.execute(
            insert(agent_memory)
            .values(
                agent_id=agent_id,
                note=note,
                written_by_person_id=person_id,
                run_id=run_id,
                written_at=now,
            )
            .returning(agent_memory.c.id)
        )
        query = _MEMORY_OF.where(agent_memory.c.id == written.scalar_one())
        return _note((await self._c.execute(query)).one())

    async def memory_note(self, agent_id: int, note_id: int) -> MemoryNote | None:
        query = _MEMORY_OF.where(agent_memory.c.agent_id == agent_id, agent_memory.c.id == note_id)
        row = (await self._c.execute(query)).one_or_none()
        return None if row is None else _note(row)

    async def remove_memory(self, note_id: int) -> None:
        await self._c.execute(delete(agent_memory).where(agent_memory.c.id == note_id))

    async def memory(self, agent_id: int) -> list[MemoryNote]:
        """All of an agent's memory, oldest first: what its brain is given."""
        rows = await self._c.execute(_MEMORY, {"agent_id": agent_id})
        return [_note(row) for row in rows]

    async def memory_page(self, agent_id: int, window: Window) -> Slice[MemoryNote]:
        """An agent's memory, newest first."""
        query = _MEMORY_OF.where(agent_memory.c.agent_id == agent_id)
        return await sliced(self._c, query, agent_memory.c.id, window, _note)

    async def add_warning(
        self, agent_id: int, reason: str, person_id: int | None, now: datetime
    ) -> int:
        await self._c.execute(
            insert(agent_warnings).values(
                agent_id=agent_id, reason=reason, given_by_person_id=person_id, given_at=now
            )
        )
        query = select(func.count()).where(agent_warnings.c.agent_id == agent_id)
        return int((await self._c.execute(query)).scalar_one())

    async def warnings_page(self, agent_id: int, window: Window) -> Slice[AgentWarning]:
        """The warnings an agent was given, newest first."""
        query = _WARNINGS_OF.where(agent_warnings.c.agent_id == agent_id)
        return await sliced(self._c, query, agent_warnings.c.id, window, _warning)
