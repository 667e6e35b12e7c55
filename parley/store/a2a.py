"""A2A clients (found by their token's hash), the agents exposed to them, and the conversations
that are their contexts, with the runs in them: what a client may read is what is in those."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, true, update
from sqlalchemy.exc import IntegrityError

from parley.a2a.model import A2AClient, Exposed, PushConfig, TaskFilter
from parley.errors import Conflict
from parley.store.a2a_tasks import (
    PUSHED,
    SENT_AS,
    TASK_COLUMNS,
    TASK_TEXTS,
    TASKS,
    UPDATED,
    SentText,
    TaskRow,
    TaskText,
    filtered,
    task_of,
)
from parley.store.connection import Connection
from parley.store.shapes import once
from parley.store.tables import (
    a2a_answers,
    a2a_clients,
    a2a_exposures,
    a2a_push_configs,
    agents,
    messages,
    people,
    topics,
)

_ANSWER = once(
    select(a2a_answers.c.body, a2a_answers.c.task_message_id).where(
        a2a_answers.c.sent_as == bindparam("sent_as")
    )
)
_CLIENTS = select(a2a_clients, people.c.name.label("created_by")).join(
    people, people.c.id == a2a_clients.c.created_by_person_id
)
_EXPOSED = select(
    a2a_exposures.c.agent_id, agents.c.name, agents.c.engram, a2a_exposures.c.exposed_at
).join(agents, agents.c.id == a2a_exposures.c.agent_id)


# Read on every card's fetch: built once (see shapes.py).
_EXPOSED_BY_NAME = once(_EXPOSED.where(agents.c.name == bindparam("name")))
# Who calls and what it calls, in one read (every A2A call's first): the client holding the
# token, and beside it the agent exposed under the name (NULLs when none is).
_NAMED = _EXPOSED.where(agents.c.name == bindparam("name")).subquery("named")
_CALLER = once(
    _CLIENTS.add_columns(
        _NAMED.c.agent_id.label("exposed_agent_id"),
        _NAMED.c.name.label("exposed_name"),
        _NAMED.c.engram.label("exposed_engram"),
        _NAMED.c.exposed_at,
    )
    .outerjoin(_NAMED, true())
    .where(a2a_clients.c.token_hash == bindparam("token_hash"), a2a_clients.c.removed_at.is_(None))
)


def _client(row: Any) -> A2AClient:
    return A2AClient(
        id=row.id,
        name=row.name,
        created_by=row.created_by,
        created_by_person_id=row.created_by_person_id,
        created_at=row.created_at,
        removed_at=row.removed_at,
    )


def _exposed(row: Any) -> Exposed:
    return Exposed(row.agent_id, row.name, row.engram, row.exposed_at)


class A2ARepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def add_client(
        self, name: str, token_hash: str, person_id: int, now: datetime
    ) -> A2AClient:
        try:
            async with self._c.begin_nested():
                await self._c.execute(
                    insert(a2a_clients).values(
                        name=name,
                        token_hash=token_hash,
                        created_by_person_id=person_id,
                        created_at=now,
                    )
                )
        except IntegrityError:
            raise Conflict(f"an A2A client named {name!r} exists already", field="name") from None
        found = await self.client_by_name(name)
        assert found is not None
        return found

    async def client_by_name(self, name: str) -> A2AClient | None:
        row = (await self._c.execute(_CLIENTS.where(a2a_clients.c.name == name))).first()
        return _client(row) if row else None

    async def caller(self, token_hash: str, name: str) -> tuple[A2AClient | None, Exposed | None]:
        """The active client holding this token, and the agent exposed as ``name`` (neither
        read without the other: no client, no agent either)."""
        parameters = {"token_hash": token_hash, "name": name}
        row = (await self._c.execute(_CALLER, parameters)).first()
        if row is None:
            return None, None
        if row.exposed_agent_id is None:
            return _client(row), None
        exposed = Exposed(
            row.exposed_agent_id, row.exposed_name, row.exposed_engram, row.exposed_at
        )
        return _client(row), exposed

    async def clients(self) -> list[A2AClient]:
        rows = await self._c.execute(_CLIENTS.order_by(a2a_clients.c.name))
        return [_client(row) for row in rows]

    async def remove_client(self, client_id: int, token_hash: str, now: datetime) -> None:
        """Its token replaced by one nobody holds (the column is unique and required)."""
        await self._c.execute(
            update(a2a_clients)
            .where(a2a_clients.c.id == client_id)
            .values(removed_at=now, token_hash=token_hash)
        )

    async def expose(self, agent_id: int, now: datetime) -> bool:
        """False when it was exposed already."""
        try:
            async with self._c.begin_nested():
                await self._c.execute(
                    insert(a2a_exposures).values(agent_id=agent_id, exposed_at=now)
                )
        except IntegrityError:
            return False
        return True

    async def hide(self, agent_id: int) -> bool:
        result = await self._c.execute(
            delete(a2a_exposures).where(a2a_exposures.c.agent_id == agent_id)
        )
        return bool(result.rowcount)

    async def exposed(self) -> list[Exposed]:
        rows = await self._c.execute(_EXPOSED.order_by(agents.c.name))
        return [_exposed(row) for row in rows]

    async def exposed_by_name(self, name: str) -> Exposed | None:
        row = (await self._c.execute(_EXPOSED_BY_NAME, {"name": name})).first()
        return _exposed(row) if row else None

    async def open_contexts_of(self, client_id: int) -> list[int]:
        query = select(topics.c.id).where(
            topics.c.a2a_client_id == client_id, topics.c.closed_at.is_(None)
        )
        return list((await self._c.execute(query)).scalars())

    async def task_of_client(
        self, client_id: int, agent_id: int, message_id: int
    ) -> TaskRow | None:
        """The client's task ``message_id`` (its first text) in one of its contexts with the
        agent, and the run it follows now (``a2a_tasks.py``)."""
        parameters = {"message_id": message_id, "client_id": client_id, "agent_id": agent_id}
        row = (await self._c.execute(_TASK_OF_CLIENT, parameters)).first()
        return task_of(row) if row else None

    async def tasks_of_client(
        self, client_id: int, agent_id: int, given: TaskFilter, offset: int, limit: int
    ) -> list[TaskRow]:
        """The client's tasks with the agent that ``given`` lets through, last updated first."""
        query = filtered(select(*TASKS.selected_columns), client_id, agent_id, given)
        query = query.order_by(UPDATED.desc(), messages.c.id.desc()).offset(offset).limit(limit)
        return [task_of(row) for row in await self._c.execute(query)]

    async def count_tasks_of_client(self, client_id: int, agent_id: int, given: TaskFilter) -> int:
        query = filtered(select(func.count()), client_id, agent_id, given)
        return int((await self._c.execute(query)).scalar_one())

    async def task_texts(self, task_message_id: int) -> list[TaskText]:
        """The task's texts, its first and those that continue it, in the order sent."""
        rows = await self._c.execute(TASK_TEXTS, {"task_id": task_message_id})
        return [TaskText(row.id, row.body, row.run_id, row.a2a_sent_as) for row in rows]

    async def sent_as(self, key: str) -> SentText | None:
        """The client's text, or answer, kept under ``key`` (``a2a/contexts.py``'s sent_key)."""
        row = (await self._c.execute(SENT_AS, {"sent_as": key})).first()
        if row is not None:
            return SentText(row.body, row.a2a_task_id or row.id)
        return await self.answer_sent_as(key)

    async def answer_sent_as(self, key: str) -> SentText | None:
        """The client's answer to a task's question kept under ``key``: a text sent again needs
        no such read, the unique index on ``messages.a2a_sent_as`` refuses it."""
        answer = (await self._c.execute(_ANSWER, {"sent_as": key})).first()
        return None if answer is None else SentText(answer.body, answer.task_message_id)

    async def keep_answer(
        self, key: str, approval_id: int, task_message_id: int, body: str, now: datetime
    ) -> None:
        """The client's answer to the task's question, kept under ``key``."""
        await self._c.execute(
            insert(a2a_answers).values(
                sent_as=key,
                approval_id=approval_id,
                task_message_id=task_message_id,
                body=body,
                answered_at=now,
            )
        )

    async def link_text(self, message_id: int, task_message_id: int) -> None:
        """The text ``message_id`` continues the task ``task_message_id``."""
        await self._c.execute(
            update(messages).where(messages.c.id == message_id).values(a2a_task_id=task_message_id)
        )

    async def set_push(
        self, client_id: int, message_id: int, config_id: str, now: datetime, **given: str | None
    ) -> PushConfig:
        """Add the config, or replace the one of that id (``given``: url, token, auth_scheme,
        auth_credentials)."""
        found = await self.push(client_id, message_id, config_id)
        if found is None:
            await self._c.execute(
                insert(a2a_push_configs).values(
                    client_id=client_id,
                    message_id=message_id,
                    config_id=config_id,
                    created_at=now,
                    **given,
                )
            )
        else:
            await self._c.execute(
                update(a2a_push_configs)
                .where(a2a_push_configs.c.id == found.id)
                .values(**given, done_at=None)
            )
        made = await self.push(client_id, message_id, config_id)
        assert made is not None
        return made

    async def push(self, client_id: int, message_id: int, config_id: str) -> PushConfig | None:
        rows = await self.pushes(client_id, message_id, config_id)
        return rows[0] if rows else None

    async def pushes(
        self, client_id: int, message_id: int, config_id: str | None = None
    ) -> list[PushConfig]:
        query = select(a2a_push_configs).where(
            a2a_push_configs.c.client_id == client_id,
            a2a_push_configs.c.message_id == message_id,
        )
        if config_id is not None:
            query = query.where(a2a_push_configs.c.config_id == config_id)
        rows = await self._c.execute(query.order_by(a2a_push_configs.c.id))
        return [_push(row) for row in rows]

    async def delete_push(self, client_id: int, message_id: int, config_id: str) -> bool:
        result = await self._c.execute(
            delete(a2a_push_configs).where(
                a2a_push_configs.c.client_id == client_id,
                a2a_push_configs.c.message_id == message_id,
                a2a_push_configs.c.config_id == config_id,
            )
        )
        return bool(result.rowcount)

    async def pushes_due(self, limit: int = 500) -> list[tuple[PushConfig, TaskRow]]:
        """Configs whose task has not ended yet, as far as they were told, with their task."""
        query = (
            select(a2a_push_configs, *(c.label(f"{PUSHED}{c.name}") for c in TASK_COLUMNS))
            .join(messages, messages.c.id == a2a_push_configs.c.message_id)
            .join(topics, topics.c.id == messages.c.topic_id)
            .where(a2a_push_configs.c.done_at.is_(None))
            .order_by(a2a_push_configs.c.id)
            .limit(limit)
        )
        return [(_push(row), task_of(row, PUSHED)) for row in await self._c.execute(query)]

    async def push_done(self, push_id: int, now: datetime) -> None:
        await self._c.execute(
            update(a2a_push_configs).where(a2a_push_configs.c.id == push_id).values(done_at=now)
        )


def _push(row: Any) -> PushConfig:
    return PushConfig(
        id=row.id,
        client_id=row.client_id,
        message_id=row.message_id,
        config_id=row.config_id,
        url=row.url,
        token=row.token,
        auth_scheme=row.auth_scheme,
        auth_credentials=row.auth_credentials,
        created_at=row.created_at,
        done_at=row.done_at,
    )


_TASK_OF_CLIENT = once(
    TASKS.where(
        messages.c.id == bindparam("message_id"),
        topics.c.a2a_client_id == bindparam("client_id"),
        topics.c.addressed_agent_id == bindparam("agent_id"),
    )
)
