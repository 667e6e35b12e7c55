"""PostgreSQL's hot statements run on asyncpg directly, inside SQLAlchemy's transaction.

Measured on this project's 2-core machine, a statement through SQLAlchemy's async layer costs
~146 µs of the hub's CPU against ~52 µs on asyncpg alone: the greenlet hop, the execution
context and the result object, per statement. A hop runs ~10 statements, so that difference
bounded the hub on PostgreSQL. A statement built once at import (``once``) is compiled here
once per shape (its parameter names, its expanded lists' lengths) and then run on the same
asyncpg connection and transaction SQLAlchemy holds, with SQLAlchemy's own bind and result
processing (type decorators) and its errors: a failure reads as it would through SQLAlchemy
(``IntegrityError``, a lost connection invalidated). Everything else goes through SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar, cast

from sqlalchemy import Connection as SyncConnection
from sqlalchemy import CursorResult, Dialect, Executable
from sqlalchemy.engine.result import IteratorResult, SimpleResultMetaData
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement

T = TypeVar("T")
S = TypeVar("S", bound=Executable)

# The statements that may run directly, by identity: module constants, alive for good.
_ONCE: dict[int, Executable] = {}


def once(statement: S) -> S:
    """Mark ``statement`` as built once at import: on PostgreSQL it runs on asyncpg directly."""
    _ONCE[id(statement)] = statement
    return statement


class _Shape:
    """A statement compiled for one set of parameter names: its SQL, how to bind, what rows
    come back and how to read them."""

    def __init__(self, statement: Executable, keys: tuple[str, ...], dialect: Dialect) -> None:
        assert isinstance(statement, ClauseElement)
        compiled = statement.compile(dialect=dialect, column_keys=list(keys))
        assert isinstance(compiled, SQLCompiler)
        self.compiled = compiled
        # Values made in Python at execution (column defaults) are SQLAlchemy's to fill in.
        self.plain = not (compiled.insert_prefetch or compiled.update_prefetch)
        self.expanding = bool(compiled.post_compile_params or compiled.literal_execute_params)
        self.positions = tuple(compiled.positiontup or ())
        self.binders: Mapping[str, Any] = compiled._bind_processors
        columns = compiled._result_columns
        self.returns_rows = bool(columns)
        self.readers = [column.type._cached_result_processor(dialect, None) for column in columns]
        self.metadata = SimpleResultMetaData([column.keyname for column in columns])

    def bound(self, parameters: dict[str, Any]) -> tuple[str, list[Any]]:
        """The SQL and its positional values for ``parameters``."""
        binders: Mapping[str, Any]
        if self.expanding:
            expanded = self.compiled.construct_expanded_state(parameters)
            sql, values = expanded.statement, expanded.parameters
            names, binders = expanded.positiontup or (), expanded.processors
        else:
            sql, values = self.compiled.string, self.compiled.construct_params(parameters)
            names, binders = self.positions, self.binders
        bound = []
        for name in names:
            value, binder = values[name], binders.get(name)
            bound.append(value if binder is None else binder(value))
        return sql, bound

    def result(self, records: list[Any], rowcount: int) -> CursorResult[Any]:
        readers = self.readers
        rows = [
            tuple(
                value if reader is None else reader(value)
                for reader, value in zip(readers, record, strict=True)
            )
            for record in records
        ]
        result: Any = IteratorResult(self.metadata, iter(rows))
        result.rowcount = rowcount
        # Rows and a rowcount: what the repositories read of a CursorResult.
        return cast(CursorResult[Any], result)


_SHAPES: dict[tuple[int, tuple[str, ...]], _Shape] = {}


class DriverConnection:
    """SQLAlchemy's AsyncConnection on asyncpg, with the statements marked ``once`` run on
    asyncpg directly within the same transaction."""

    def __init__(self, connection: AsyncConnection) -> None:
        self._sa = connection
        self._raw: Any = None  # the pool's connection, once looked up
        self._adapted: Any = None  # SQLAlchemy's asyncpg adapter on it

    @property
    def dialect(self) -> Dialect:
        return self._sa.dialect

    async def execute(self, statement: Executable, parameters: Any = None) -> CursorResult[Any]:
        if id(statement) not in _ONCE or not isinstance(parameters, dict):
            return await self._sa.execute(statement, parameters)
        keys = tuple(sorted(parameters))
        shape = _SHAPES.get((id(statement), keys))
        if shape is None:
            shape = _SHAPES[(id(statement), keys)] = _Shape(statement, keys, self.dialect)
        if not shape.plain:
            return await self._sa.execute(statement, parameters)
        try:
            adapted = await self._adapter()
        except DBAPIError:
            raise
        except Exception as error:  # BEGIN failed: said as SQLAlchemy would
            translated = await self._translated(self._adapted, error, "BEGIN", [])
            raise translated from translated.__cause__
        if adapted is None:
            return await self._sa.execute(statement, parameters)
        sql, values = shape.bound(parameters)
        return await self._run(adapted, shape, sql, values)

    def begin_nested(self) -> AbstractAsyncContextManager[Any]:
        return self._sa.begin_nested()

    async def run_sync(self, fn: Callable[[SyncConnection], T]) -> T:
        return await self._sa.run_sync(fn)

    async def _adapter(self) -> Any:
        """SQLAlchemy's asyncpg connection, its transaction begun (it begins at the first
        statement); None where this SQLAlchemy's adapter is not the one this was written for."""
        if self._adapted is None:
            self._raw = raw = await self._sa.get_raw_connection()
            adapted = raw.dbapi_connection
            if not all(hasattr(adapted, a) for a in ("_transaction", "_start_transaction")):
                return None
            self._adapted = adapted
        if self._adapted._transaction is None and not self._adapted.autocommit:
            await self._adapted._start_transaction()
        return self._adapted

    async def _run(
        self, adapted: Any, shape: _Shape, sql: str, values: list[Any]
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
        if dispatch.after_cursor_execute:
            dispatch.after_cursor_execute(sync, None, sql, values, None, False)
        return shape.result(records, rowcount)

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
