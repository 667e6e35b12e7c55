"""Approvals: asked by a running turn, decided once (the first decision wins, a later one finds
it decided), listed for whoever may decide them: the person whose conversation or task the turn
works for, at its origin, and every owner."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, insert, select, update

from parley.approvals.model import Approval, ApprovalState
from parley.people.model import Person
from parley.reads.model import Slice, Window
from parley.store.connection import Connection
from parley.store.keyset import sliced
from parley.store.tables import agents, approvals, nodes, people, runs, topics

_TOPIC = topics.alias("approval_topic")
_ORIGIN = topics.alias("approval_origin")
_ORIGIN_ID = func.coalesce(_TOPIC.c.origin_topic_id, _TOPIC.c.root_topic_id, _TOPIC.c.id)

_QUERY = (
    select(
        approvals,
        agents.c.name.label("agent_name"),
        nodes.c.name.label("node_name"),
        runs.c.topic_id,
        runs.c.state.label("run_state"),
        people.c.name.label("decided_by"),
    )
    .join(runs, runs.c.id == approvals.c.run_id)
    .join(agents, agents.c.id == runs.c.agent_id)
    .join(nodes, nodes.c.id == agents.c.node_id)
    .outerjoin(people, people.c.id == approvals.c.decided_by_person_id)
)


def _approval(row: Any) -> Approval:
    return Approval(
        id=row.id,
        run_id=row.run_id,
        agent_name=row.agent_name,
        node_name=row.node_name,
        topic_id=row.topic_id,
        tool=row.tool,
        arguments=row.arguments,
        state=ApprovalState(row.state),
        asked_at=row.asked_at,
        deadline=row.deadline,
        decided_at=row.decided_at,
        decided_by=row.decided_by,
        reason=row.reason,
        run_state=row.run_state,
    )


def decidable_by(person: Person) -> Any:
    """The approvals ``person`` may decide, as a condition on the query's rows."""
    if person.is_owner:
        return approvals.c.id.is_not(None)
    origin_person = (
        select(_ORIGIN.c.person_id)
        .select_from(_TOPIC.join(_ORIGIN, _ORIGIN.c.id == _ORIGIN_ID))
        .where(_TOPIC.c.id == runs.c.topic_id)
        .scalar_subquery()
    )
    return origin_person == person.id


class ApprovalsRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def add(
        self, run_id: int, tool: str, arguments: str, asked_at: datetime, deadline: datetime
    ) -> int:
        added = await self._c.execute(
            insert(approvals)
            .values(
                run_id=run_id,
                tool=tool,
                arguments=arguments,
                state=ApprovalState.WAITING.value,
                asked_at=asked_at,
                deadline=deadline,
            )
            .returning(approvals.c.id)
        )
        return int(added.scalar_one())

    async def by_id(self, approval_id: int) -> Approval | None:
        found = await self._c.execute(_QUERY.where(approvals.c.id == approval_id))
        row = found.first()
        return None if row is None else _approval(row)

    async def waiting_of_run(self, run_id: int) -> int:
        found = await self._c.execute(
            select(func.count())
            .select_from(approvals)
            .where(approvals.c.run_id == run_id, approvals.c.state == ApprovalState.WAITING.value)
        )
        return int(found.scalar_one())

    async def decide(
        self,
        approval_id: int,
        state: ApprovalState,
        at: datetime,
        person_id: int | None,
        reason: str | None,
    ) -> bool:
        """Decided now, unless it was already: True when this decision is the one."""
        done = await self._c.execute(
            update(approvals)
            .where(approvals.c.id == approval_id, approvals.c.state == ApprovalState.WAITING.value)
            .values(state=state.value, decided_at=at, decided_by_person_id=person_id, reason=reason)
        )
        return done.rowcount == 1

    async def may_decide(self, person: Person, approval_id: int) -> bool:
        found = await self._c.execute(
            select(approvals.c.id)
            .join(runs, runs.c.id == approvals.c.run_id)
            .where(approvals.c.id == approval_id, decidable_by(person))
        )
        return found.first() is not None

    async def waiting_for(self, person: Person, now: datetime, window: Window) -> Slice[Approval]:
        """What waits for ``person``'s decision, oldest first: its turn running, its deadline
        ahead."""
        query = _QUERY.where(
            and_(
                approvals.c.state == ApprovalState.WAITING.value,
                runs.c.state == "running",
                approvals.c.deadline > now,
                decidable_by(person),
            )
        )
        return await sliced(self._c, query, approvals.c.id, window, _approval, newest_first=False)

    async def of_run(self, run_id: int) -> list[Approval]:
        found = await self._c.execute(
            _QUERY.where(approvals.c.run_id == run_id).order_by(approvals.c.id)
        )
        return [_approval(row) for row in found]
