"""The history of owners' changes to agents' settings, one row per setting changed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select

from parley.agents.model import SettingChange
from parley.reads.model import Slice, Window
from parley.store.connection import Connection
from parley.store.keyset import sliced
from parley.store.tables import agent_changes, agents, people

_CHANGES_OF = (
    select(agent_changes, agents.c.name.label("agent_name"), people.c.name.label("author"))
    .join(agents, agents.c.id == agent_changes.c.agent_id)
    .outerjoin(people, people.c.id == agent_changes.c.changed_by_person_id)
)


def _change(row: Any) -> SettingChange:
    return SettingChange(
        id=row.id,
        agent_name=row.agent_name,
        setting=row.setting,
        old=row.old,
        new=row.new,
        changed_by=row.author,
        changed_at=row.changed_at,
    )


class AgentChangesRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def record(
        self,
        agent_id: int,
        changed: list[tuple[str, str | None, str | None]],
        person_id: int | None,
        now: datetime,
    ) -> None:
        """``changed``: (setting, old, new) for each setting that changed."""
        if not changed:
            return
        rows = [
            {
                "agent_id": agent_id,
                "setting": setting,
                "old": old,
                "new": new,
                "changed_by_person_id": person_id,
                "changed_at": now,
            }
            for setting, old, new in changed
        ]
        await self._c.execute(insert(agent_changes), rows)

    async def page(self, agent_id: int, window: Window) -> Slice[SettingChange]:
        """An agent's changes, newest first."""
        query = _CHANGES_OF.where(agent_changes.c.agent_id == agent_id)
        return await sliced(self._c, query, agent_changes.c.id, window, _change)
