"""PostgreSQL's hot statements run on asyncpg directly, inside SQLAlchemy's transaction.

A statement through SQLAlchemy's async layer also pays a greenlet hop (see shapes.py for what
that costs). A statement marked ``once`` runs on the same asyncpg connection and transaction
SQLAlchemy holds, and fails as it would through SQLAlchemy (``IntegrityError``, a lost
connection invalidated), unless the setting or a missing internal says otherwise
(internals.py).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar, cast

from sqlalchemy import Connection as SyncConnection
from sqlalchemy import CursorResult, Dialect, Executable
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from parley.store.internals import DirectDriver, asyncpg_path_lacks
from parley.store.shapes import Shape, direct_shape, marked

T = TypeVar("T")


class DriverConnection:
    """SQLAlchemy's AsyncConnection on asyncpg, with the statements marked ``once`` run on
    asyncpg directly within the same transaction."""

    def __init__(self, connection: AsyncConnection, direct: DirectDriver) -> None:
        self._sa = connection
        self._direct = direct
        self._raw: Any = None  # the pool's connection, once looked up
        self._adapted: Any = None  # SQLAlchemy's asyncpg adapter on it

    @property
    def dialect(self) -> Dialect:
        return self._sa.dialect

    async def execute(self, statement: Executable, parameters: Any = None) -> CursorResult[Any]:
        if not marked(statement) or not self._direct.enabled:
            return await self._sa.execute(statement, parameters)
        try:
            adapted = await self._adapter()
        except DBAPIError:
            raise
        except Exception as error:  # BEGIN failed: said as SQLAlchemy would
            translated = await self._translated(self._adapted, error, "BEGIN", [])
            raise translated from translated.__cause__
        except BaseException as exit_:
            self._discard(exit_)
            raise
        shape = None if adapted is None else direct_shape(statement, parameters, self.dialect)
        if shape is None:
            return await self._sa.execute(statement, parameters)
        sql, values = shape.bound(parameters)
        return await self._run(adapted, shape, sql, values)

    def begin_nested(self) -> AbstractAsyncContextManager[Any]:
        return self._sa.begin_nested()

    async def run_sync(self, fn: Callable[[SyncConnection], T]) -> T:
        return await self._sa.run_sync(fn)

    async def _adapter(self) -> Any:
        """SQLAlchemy's asyncpg connection, its transaction begun (it begins at the first
        statement); None where this SQLAlchemy lacks an internal the direct path reads
        (probed at the store's first statement, internals.py)."""
        if self._adapted is None:
            raw = await self._sa.get_raw_connection()
            adapted, pool = raw.dbapi_connection, self._sa.sync_engine.pool
            if not self._direct.usable(lambda: asyncpg_path_lacks(adapted, pool, self.dialect)):
                return None
            self._raw, self._adapted = raw, adapted
        if self._adapted._transaction is None and not self._adapted.autocommit:
            await self._adapted._start_transaction()
        return self._adapted

    async def _run(
        self, adapted: Any, shape: Shape, sql: str, values: list[Any]
    ) -> CursorResult[Any]:
        sync = self._sa.sync_connection
        assert sync is not None
        dispatch = sync.dispatch  # statement listeners (a bench's counters) see these too
        if dispatch.before_cursor_execute:
            dispatch.before_cursor_execute(sync, None, sql, values, None, False)
        driver = adapted._connection
        try:
            async with adapted._execute_mutex:
                if shape.returns_rows:
                    records = await driver.fetch(sql, *values)
                    rowcount = len(records)
                else:
                    status = await driver.execute(sql, *values)
                    records, rowcount = [], _affected(status)
        except Exception as error:
            translated = await self._translated(adapted, error, sql, values)
            raise translated from translated.__cause__
        except BaseException as exit_:
            self._discard(exit_)
            raise
        if dispatch.after_cursor_execute:
            dispatch.after_cursor_execute(sync, None, sql, values, None, False)
        return shape.result(records, rowcount)

    def _discard(self, exit_: BaseException) -> None:
        """Cancelled (or interrupted) mid-statement, the connection's state is unknown: asyncpg
        may hold a BEGIN it sent as its transaction while SQLAlchemy holds none, and each later
        transaction on it then commits a savepoint inside that one, never a commit (measured:
        397 of 400 commits lost after cancelled reads). As SQLAlchemy does on such an exit,
        this connection is closed and never returned to the pool. Closed at once, without an
        await, so a second cancellation cannot stop it halfway."""
        sync = self._sa.sync_connection
        if sync is not None and not sync.invalidated:
            sync.invalidate(exit_)

    async def _translated(
        self, adapted: Any, error: Exception, sql: str, values: list[Any]
    ) -> Exception:
        """``error`` as SQLAlchemy would have raised it: the driver's wrapped in its class
        (``IntegrityError``, …), a lost connection invalidated; any other error as it is."""
        if adapted is None:
            return error
        try:
            adapted._handle_exception(error)  # raises asyncpg's error as the DBAPI's
        except Exception as dbapi_error:
            if not isinstance(dbapi_error, self.dialect.loaded_dbapi.Error):
                return error
            lost = self.dialect.is_disconnect(cast(Any, dbapi_error), adapted, None)
            if lost:  # as SQLAlchemy does: this connection, and the pool's older ones
                await self._sa.invalidate(dbapi_error)
                self._sa.sync_engine.pool._invalidate(self._raw, dbapi_error, _checkin=False)
            wrapped = DBAPIError.instance(
                sql,
                values,
                dbapi_error,
                self.dialect.loaded_dbapi.Error,
                connection_invalidated=lost,
                dialect=self.dialect,
            )
            wrapped.__cause__ = dbapi_error
            return wrapped
        return error


def _affected(status: str) -> int:
    """The rows a command touched, from its tag (``UPDATE 3``, ``INSERT 0 1``)."""
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else -1
