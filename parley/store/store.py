"""The store: an engine, migrated at open, giving transactions with a repository per concept."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from sqlalchemy import URL, Engine
from sqlalchemy import Connection as SyncConnection
from sqlalchemy.exc import (
    DataError,
    DBAPIError,
    IntegrityError,
    InterfaceError,
    OperationalError,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from parley.errors import Contended, Invalid, Unavailable
from parley.store.a2a import A2ARepo
from parley.store.a2a_remote import RemoteTasksRepo
from parley.store.agent_changes import AgentChangesRepo
from parley.store.agents import AgentsRepo
from parley.store.approvals import ApprovalsRepo
from parley.store.bindings import BindingsRepo
from parley.store.channels import ChannelsRepo
from parley.store.checkpoints import Checkpointer
from parley.store.connection import Connection, InlineConnection
from parley.store.connections import ConnectionsRepo
from parley.store.driver import DriverConnection
from parley.store.effects import AfterCommit, Effects
from parley.store.engine import ALONE, create_engine
from parley.store.frames import FramesRepo
from parley.store.hops import HopsRepo
from parley.store.internals import DirectDriver
from parley.store.invites import InvitesRepo
from parley.store.messages import MessagesRepo
from parley.store.migrate import upgrade_to_head
from parley.store.node_credentials import NodeCredentialsRepo
from parley.store.nodes import NodesRepo
from parley.store.outbox import OutboxRepo
from parley.store.people import PeopleRepo
from parley.store.runs import RunsRepo
from parley.store.sign_ins import SignInsRepo
from parley.store.tool_calls import ToolCallsRepo
from parley.store.topics import TopicsRepo
from parley.store.violations import explain

T = TypeVar("T")

log = logging.getLogger(__name__)


class Tx:
    """One transaction; its repositories all act inside it, each made on first use (a short
    transaction uses two or three of the twenty)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        # What this transaction set in motion; the store's subscribers act on it after commit.
        self.effects = Effects()
        # The topics it made: no session of theirs, nor any run in one, but those it makes.
        self._made_topics: set[int] = set()

    @cached_property
    def people(self) -> PeopleRepo:
        return PeopleRepo(self.connection)

    @cached_property
    def sign_ins(self) -> SignInsRepo:
        return SignInsRepo(self.connection)

    @cached_property
    def nodes(self) -> NodesRepo:
        return NodesRepo(self.connection)

    @cached_property
    def node_credentials(self) -> NodeCredentialsRepo:
        return NodeCredentialsRepo(self.connection)

    @cached_property
    def agents(self) -> AgentsRepo:
        return AgentsRepo(self.connection)

    @cached_property
    def agent_changes(self) -> AgentChangesRepo:
        return AgentChangesRepo(self.connection)

    @cached_property
    def runs(self) -> RunsRepo:
        return RunsRepo(self.connection, self._made_topics)

    @cached_property
    def tool_calls(self) -> ToolCallsRepo:
        return ToolCallsRepo(self.connection)

    @cached_property
    def approvals(self) -> ApprovalsRepo:
        return ApprovalsRepo(self.connection)

    @cached_property
    def a2a(self) -> A2ARepo:
        return A2ARepo(self.connection)

    @cached_property
    def remote_tasks(self) -> RemoteTasksRepo:
        return RemoteTasksRepo(self.connection)

    @cached_property
    def topics(self) -> TopicsRepo:
        return TopicsRepo(self.connection, self._made_topics)

    @cached_property
    def messages(self) -> MessagesRepo:
        return MessagesRepo(self.connection)

    @cached_property
    def outbox(self) -> OutboxRepo:
        return OutboxRepo(self.connection)

    @cached_property
    def hops(self) -> HopsRepo:
        return HopsRepo(self.connection)

    @cached_property
    def bindings(self) -> BindingsRepo:
        return BindingsRepo(self.connection)

    @cached_property
    def connections(self) -> ConnectionsRepo:
        return ConnectionsRepo(self.connection)

    @cached_property
    def invites(self) -> InvitesRepo:
        return InvitesRepo(self.connection)

    @cached_property
    def frames(self) -> FramesRepo:
        return FramesRepo(self.connection)

    @cached_property
    def channels(self) -> ChannelsRepo:
        return ChannelsRepo(self.connection)


MISSING_DATABASE = "3D000"  # PostgreSQL's invalid_catalog_name


def _why(exc: OSError | DBAPIError, url: URL) -> str:
    """The driver's own words, without SQLAlchemy's wrapping and background link; for a
    PostgreSQL database that does not exist, the command that makes it."""
    if not isinstance(exc, DBAPIError) or exc.orig is None:
        return str(exc)
    said = str(exc.orig)
    if getattr(exc.orig, "sqlstate", None) == MISSING_DATABASE:
        owner = f"-O {url.username} " if url.username else ""
        said += f"; make it first, as PostgreSQL's superuser: createdb {owner}{url.database}"
    return said


class Store:
    def __init__(self, engine: AsyncEngine | Engine, direct_driver: bool = True) -> None:
        self.engine = engine
        # Marked statements on sqlite3/asyncpg directly, or all through SQLAlchemy (false).
        self.direct = DirectDriver(direct_driver)
        # SQLite: one transaction at a time, its statements inline (see connection.py).
        self._inline_lock = asyncio.Lock() if isinstance(engine, Engine) else None
        self._holder: asyncio.Task[object] | None = None
        # SQLite: the one connection its transactions take turns on, kept between them (a
        # checkout from SQLAlchemy's pool and its return cost a sixth of a short transaction).
        self._kept: SyncConnection | None = None
        self._after_commit: list[AfterCommit] = []
        self.checkpoints = _checkpointer(engine)  # SQLite's log, copied back off the loop

    @classmethod
    async def open(cls, url: str, *, direct_driver: bool = True) -> Store:
        engine = create_engine(url)
        try:
            await upgrade_to_head(engine)
        except (OSError, DBAPIError) as exc:
            await _dispose(engine)
            raise Unavailable(
                f"cannot open the store at {engine.url!r}: {_why(exc, engine.url)}"
            ) from exc
        store = cls(engine, direct_driver)
        if store.checkpoints is not None:
            await store.checkpoints.start()
        return store

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def subscribe(self, subscriber: AfterCommit) -> Callable[[], None]:
        """Have ``subscriber`` act on every committed transaction's effects, in the order
        subscribed; returns what ends the subscription."""
        self._after_commit.append(subscriber)
        return lambda: self._after_commit.remove(subscriber)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """Commit on success, roll back on any error; constraint violations become Conflict.
        Once committed, the subscribers act on what the transaction set in motion."""
        with self._said_plainly():
            async with self._connection() as connection:
                tx = Tx(connection)
                try:
                    yield tx
                except IntegrityError as exc:
                    raise explain(exc, at_commit=False) from exc
        await self._committed(tx.effects)

    @asynccontextmanager
    async def single_read(self) -> AsyncIterator[Tx]:
        """For one statement that only reads (the person behind a token), outside any
        transaction. On PostgreSQL one round trip where BEGIN, the read and COMMIT take three
        (every API call's answer waited for them, behind whatever else the hub's loop did
        meanwhile); on SQLite no BEGIN IMMEDIATE and no COMMIT, which cost the writer's lock
        and a turn at the log for nothing written. Each statement sees its own moment: use it
        for one only."""
        if not isinstance(self.engine, AsyncEngine):
            with self._said_plainly():
                async with self._inline_turn() as sync:
                    with _alone(sync):
                        yield Tx(InlineConnection(sync, self.direct))
            return
        with self._said_plainly():
            async with self.engine.connect() as connection:
                await connection.execution_options(isolation_level="AUTOCOMMIT")
                yield Tx(DriverConnection(connection, self.direct))

    @contextmanager
    def _said_plainly(self) -> Iterator[None]:
        """The driver's errors as ours: a violation as Conflict, an outage as Unavailable, …"""
        try:
            yield
        except IntegrityError as exc:
            raise explain(exc, at_commit=True) from exc
        except OverflowError as exc:
            raise _unstorable(exc) from exc
        except DBAPIError as exc:
            if _unreachable(exc, self.dialect):
                raise Unavailable(f"the store is unreachable: {exc.orig}") from exc
            if _given_up(exc):
                raise Contended(
                    "the store gave this transaction up to let a concurrent one through"
                    f" ({exc.orig}); nothing of it was kept: try again"
                ) from exc
            # asyncpg refusing a parameter's range says so in words only
            if isinstance(exc, DataError) or "out of int" in str(exc.orig):
                raise _unstorable(exc) from exc
            raise

    async def _committed(self, effects: Effects) -> None:
        if effects.empty:
            return
        for subscriber in list(self._after_commit):
            try:
                await subscriber(effects)
            except Exception:  # the commit stands: one subscriber's failure is not the caller's
                log.exception("acting on a committed transaction failed in %r", subscriber)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Connection]:
        if isinstance(self.engine, AsyncEngine):
            async with self.engine.begin() as connection:
                yield DriverConnection(connection, self.direct)
            return
        async with self._inline_turn() as sync_connection:
            with sync_connection.begin():
                yield InlineConnection(sync_connection, self.direct)

    @asynccontextmanager
    async def _inline_turn(self) -> AsyncIterator[SyncConnection]:
        """SQLite's kept connection, this task's alone until it is given back with no
        transaction left open on it."""
        assert self._inline_lock is not None
        task = asyncio.current_task()
        if task is not None and task is self._holder:
            # The lock is not reentrant: a transaction opened inside another would wait forever.
            raise RuntimeError("a store transaction was opened inside another one")
        async with self._inline_lock:
            self._holder = task
            try:
                sync_connection = self._kept_connection()
                try:
                    yield sync_connection
                finally:
                    self._settle(sync_connection)
            finally:
                self._holder = None

    def _settle(self, sync_connection: SyncConnection) -> None:
        """No transaction left open on the kept connection: a commit SQLite refused (a deferred
        foreign key) leaves its transaction open, which the pool's return used to roll back.
        A connection that cannot even say so (closed under us) is not kept."""
        if sync_connection.closed or sync_connection.invalidated:
            return  # opened again at the next transaction
        try:
            raw = sync_connection.connection.dbapi_connection
            if raw is not None and raw.in_transaction:
                raw.rollback()
        except Exception:
            log.warning("SQLite's kept connection is unusable: opening another", exc_info=True)
            sync_connection.invalidate()

    def _kept_connection(self) -> SyncConnection:
        """SQLite's kept connection; a new one if it was closed or invalidated (a lost file)."""
        kept = self._kept
        if kept is None or kept.closed or kept.invalidated:
            if kept is not None:
                kept.close()
            assert isinstance(self.engine, Engine)
            kept = self._kept = self.engine.connect()
        return kept

    async def run_sync(self, fn: Callable[[SyncConnection], T]) -> T:
        """Run ``fn`` with a plain sync connection (schema inspection, tests)."""
        async with self._connection() as connection:
            return await connection.run_sync(fn)

    async def close(self) -> None:
        if self.checkpoints is not None:
            await self.checkpoints.stop()
        held = self._inline_lock is not None and self._inline_lock.locked()
        if self._kept is not None and not held:  # one in a transaction is left to end with it
            self._kept.close()
            self._kept = None
        await _dispose(self.engine)


def _unstorable(exc: Exception) -> Invalid:
    """A value out of the store's range (an id past 2^31 on PostgreSQL, past 2^63 on SQLite) or
    that it cannot hold: the caller's input, not an outage."""
    reason = exc.orig if isinstance(exc, DBAPIError) else exc
    first_line = str(reason).strip().splitlines()[0] if str(reason).strip() else "out of range"
    return Invalid(f"a value cannot be stored: {first_line}")


# PostgreSQL's deadlock_detected and serialization_failure: the transaction was rolled back to
# let another through, and the same one tried again may well pass.
GIVEN_UP = {"40P01", "40001"}
SQLITE_BUSY = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED


def _given_up(error: DBAPIError) -> bool:
    """PostgreSQL's deadlock or serialization failure; SQLite's lock still held by another
    connection once its busy timeout ran out."""
    orig = error.orig
    return (
        getattr(orig, "sqlstate", None) in GIVEN_UP
        or getattr(orig, "sqlite_errorcode", None) in SQLITE_BUSY
    )


def _unreachable(error: DBAPIError, dialect: str) -> bool:
    """A lost connection (PostgreSQL may say so with any class of error), or PostgreSQL's
    operational errors. SQLite's OperationalError is mostly a bug of ours, not an outage."""
    if error.connection_invalidated:
        return True
    return isinstance(error, OperationalError | InterfaceError) and dialect != "sqlite"


def _checkpointer(engine: AsyncEngine | Engine) -> Checkpointer | None:
    """For a SQLite database in a file (not one in memory)."""
    if isinstance(engine, AsyncEngine):
        return None
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Checkpointer(Path(database))


@contextmanager
def _alone(sync: SyncConnection) -> Iterator[None]:
    """A statement on SQLite's kept connection outside any transaction: sqlite3 (in autocommit,
    see engine.py) reads in one of its own. Through SQLAlchemy rather than the driver it
    begins SQLAlchemy's transaction, as ever, but not SQLite's (no BEGIN IMMEDIATE): that
    transaction, empty, is ended here."""
    sync.info[ALONE] = True
    try:
        yield
    except BaseException:
        if sync.in_transaction():
            sync.rollback()
        raise
    finally:
        sync.info[ALONE] = False
    if sync.in_transaction():
        sync.commit()


async def _dispose(engine: AsyncEngine | Engine) -> None:
    if isinstance(engine, AsyncEngine):
        await engine.dispose()
    else:
        engine.dispose()
