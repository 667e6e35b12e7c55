"""Node rows, and the node session each one has by construction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, insert, select, text, update

from parley.mesh.model import Node, Workload
from parley.reads.model import Slice, Window
from parley.store.connection import Connection
from parley.store.keyset import sliced
from parley.store.shapes import once
from parley.store.tables import agents, nodes, runs


def _node(row: Any) -> Node:
    return Node(
        id=row.id,
        name=row.name,
        hostname=row.hostname,
        workspace_root=row.workspace_root,
        engram=row.engram,
        joined_at=row.joined_at,
        last_seen_at=row.last_seen_at,
        session_agent_id=row.session_agent_id,
    )


# Read at each start, each node's registration and each node session's turn: built once.
_BY_NAME = once(select(nodes).where(nodes.c.name == bindparam("name")))


class NodesRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def by_name(self, name: str) -> Node | None:
        row = (await self._c.execute(_BY_NAME, {"name": name})).first()
        return _node(row) if row else None

    async def all(self) -> list[Node]:
        return [_node(row) for row in await self._c.execute(select(nodes).order_by(nodes.c.name))]

    async def page(self, window: Window) -> Slice[Node]:
        """Nodes by name."""
        return await sliced(self._c, select(nodes), nodes.c.name, window, _node, newest_first=False)

    async def workloads(self, node_ids: Sequence[int]) -> dict[int, Workload]:
        """Each node's workload, by node id (a node holding nothing is left out)."""
        hired = (
            select(agents.c.node_id, func.count().label("n"))
            .where(
                agents.c.node_id.in_(node_ids),
                agents.c.kind == "agent",
                agents.c.lifecycle != "retired",
            )
            .group_by(agents.c.node_id)
        )
        running = (
            select(agents.c.node_id, func.count().label("n"))
            .select_from(runs.join(agents, agents.c.id == runs.c.agent_id))
            .where(agents.c.node_id.in_(node_ids), runs.c.state == "running")
            .group_by(agents.c.node_id)
        )
        counts = {row.node_id: row.n for row in await self._c.execute(hired)}
        turns = {row.node_id: row.n for row in await self._c.execute(running)}
        return {
            node_id: Workload(counts.get(node_id, 0), turns.get(node_id, 0))
            for node_id in counts.keys() | turns.keys()
        }

    async def create_with_session(
        self, name: str, session_name: str, hostname: str, workspace_root: str, now: datetime
    ) -> Node:
        """Insert a node and its node session together; a deferred key checks the pair at commit."""
        session_id = await self._next_agent_id()
        node_id = (
            await self._c.execute(
                insert(nodes)
                .values(
                    name=name,
                    hostname=hostname,
                    workspace_root=workspace_root,
                    joined_at=now,
                    last_seen_at=now,
                    session_agent_id=session_id,
                )
                .returning(nodes.c.id)
            )
        ).scalar_one()
        await self.insert_session(session_id, session_name, node_id, now)
        node = await self.by_name(name)
        assert node is not None
        return node

    async def insert_session(
        self, agent_id: int | None, name: str, node_id: int, now: datetime
    ) -> None:
        """The raw insert of a node-session row; the store refuses a second one for a node."""
        values: dict[str, Any] = dict(
            name=name,
            kind="node",
            node_id=node_id,
            lifecycle="inherent",
            brain="offline",
            max_sessions=1,
            created_at=now,
        )
        if agent_id is not None:
            values["id"] = agent_id
        await self._c.execute(insert(agents).values(**values))

    async def _next_agent_id(self) -> int:
        if self._c.dialect.name == "postgresql":
            query = text("SELECT nextval(pg_get_serial_sequence('agents', 'id'))")
            return int((await self._c.execute(query)).scalar_one())
        # SQLite: the transaction holds the only write lock, so max + 1 cannot race.
        highest = (await self._c.execute(select(func.max(agents.c.id)))).scalar_one()
        return int(highest or 0) + 1

    async def record_registration(
        self, name: str, hostname: str, workspace_root: str, now: datetime
    ) -> None:
        await self._c.execute(
            update(nodes)
            .where(nodes.c.name == name)
            .values(hostname=hostname, workspace_root=workspace_root, last_seen_at=now)
        )

    async def touch(self, name: str, now: datetime) -> datetime | None:
        """The node heard from at ``now``; when it was heard from before (None: no such node)."""
        before: datetime | None = (
            await self._c.execute(select(nodes.c.last_seen_at).where(nodes.c.name == name))
        ).scalar_one_or_none()
        if before is not None:
            await self._c.execute(
                update(nodes).where(nodes.c.name == name).values(last_seen_at=now)
            )
        return before

    async def heard_last(self, name: str, at: datetime) -> bool:
        """Say the node was last heard ``at`` (a removed node, made offline); False: no node."""
        result = await self._c.execute(
            update(nodes).where(nodes.c.name == name).values(last_seen_at=at)
        )
        return result.rowcount == 1

    async def set_engram(self, name: str, engram: str) -> bool:
        result = await self._c.execute(
            update(nodes).where(nodes.c.name == name).values(engram=engram)
        )
        return result.rowcount == 1
