"""The store: an engine, migrated at open, giving transactions with a repository per concept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from parley.errors import Unavailable
from parley.runs.effects import Effects
from parley.store.agents import AgentsRepo
from parley.store.engine import create_engine
from parley.store.messages import MessagesRepo
from parley.store.migrate import upgrade_to_head
from parley.store.nodes import NodesRepo
from parley.store.outbox import OutboxRepo
from parley.store.people import PeopleRepo
from parley.store.runs import RunsRepo
from parley.store.topics import TopicsRepo
from parley.store.violations import explain


class Tx:
    """One transaction; its repositories all act inside it."""

    def __init__(self, connection: AsyncConnection) -> None:
        self.connection = connection
        self.people = PeopleRepo(connection)
        self.nodes = NodesRepo(connection)
        self.agents = AgentsRepo(connection)
        self.runs = RunsRepo(connection)
        self.topics = TopicsRepo(connection)
        self.messages = MessagesRepo(connection)
        self.outbox = OutboxRepo(connection)
        # What this transaction set in motion; the runtime acts on it after commit.
        self.effects = Effects()


class Store:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    @classmethod
    async def open(cls, url: str) -> Store:
        engine = create_engine(url)
        try:
            await upgrade_to_head(engine)
        except (OSError, DBAPIError) as exc:
            await engine.dispose()
            raise Unavailable(f"cannot open the store at {engine.url!r}: {exc}") from exc
        return cls(engine)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """Commit on success, roll back on any error; constraint violations become Conflict."""
        try:
            async with self.engine.begin() as connection:
                try:
                    yield Tx(connection)
                except IntegrityError as exc:
                    raise explain(exc, at_commit=False) from exc
        except IntegrityError as exc:
            raise explain(exc, at_commit=True) from exc
        except (OperationalError, InterfaceError) as exc:
            if not exc.connection_invalidated and self.dialect == "sqlite":
                raise  # SQLite's OperationalError is mostly a bug of ours, not an outage
            raise Unavailable(f"the store is unreachable: {exc.orig}") from exc

    async def close(self) -> None:
        await self.engine.dispose()
