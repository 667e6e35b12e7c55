"""What repositories talk to: an async ``execute`` on one connection inside a transaction.

PostgreSQL gives SQLAlchemy's own AsyncConnection (asyncpg, truly asynchronous: the database is
across a socket). SQLite gives ``InlineConnection``: SQLAlchemy's sync connection called inline.
Measured on this project's 2-core machine, one statement through aiosqlite's thread hand-off
costs ~220 µs of CPU and ~500 µs with SQLAlchemy's async layer, while SQLite itself answers in
~10 µs: the thread, not the database, was the cost. SQLite has one writer anyway, so the store
runs one SQLite transaction at a time (an asyncio lock) and its statements inline. A statement
marked ``once`` (see shapes.py) runs on sqlite3's connection directly, in the same transaction,
and fails as it would through SQLAlchemy (``IntegrityError`` for a broken rule), unless the
setting or a missing internal says otherwise (internals.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar

from sqlalchemy import Connection as SyncConnection
from sqlalchemy import CursorResult, Dialect, Executable
from sqlalchemy.exc import DBAPIError

from parley.store.internals import DirectDriver, sqlite3_path_lacks
from parley.store.shapes import Shape, direct_shape, marked

T = TypeVar("T")


class Connection(Protocol):
    @property
    def dialect(self) -> Dialect: ...

    async def execute(self, statement: Executable, parameters: Any = None) -> CursorResult[Any]: ...

    def begin_nested(self) -> Any: ...

    async def run_sync(self, fn: Callable[[SyncConnection], T]) -> T: ...


class InlineConnection:
    """An AsyncConnection look-alike whose statements run at once on a sync connection."""

    def __init__(self, sync: SyncConnection, direct: DirectDriver) -> None:
        self.sync = sync
        self._direct = direct

    @property
    def dialect(self) -> Dialect:
        return self.sync.dialect

    async def execute(self, statement: Executable, parameters: Any = None) -> CursorResult[Any]:
        if not marked(statement) or not self._direct.usable(self._lacks):
            return self.sync.execute(statement, parameters)
        if isinstance(parameters, list):
            many = _many_shape(statement, parameters, self.dialect)
            if many is None:
                return self.sync.execute(statement, parameters)
            rows = [tuple(many.bound(row)[1]) for row in parameters]
            return self._run(many, many.compiled.string, rows, many=True)
        shape = direct_shape(statement, parameters, self.dialect)
        if shape is None:
            return self.sync.execute(statement, parameters)
        sql, values = shape.bound(parameters)
        return self._run(shape, sql, tuple(values))

    def _lacks(self) -> str | None:
        return sqlite3_path_lacks(self.sync)

    def _run(self, shape: Shape, sql: str, values: Any, many: bool = False) -> CursorResult[Any]:
        sync = self.sync
        raw = sync.connection.dbapi_connection
        assert raw is not None
        dispatch = sync.dispatch  # statement listeners (a bench's counters) see these too
        if dispatch.before_cursor_execute:
            dispatch.before_cursor_execute(sync, None, sql, values, None, many)
        try:
            if many and shape.returns_rows:  # an INSERT … RETURNING: row by row, in order
                records = [record for row in values for record in raw.execute(sql, row)]
                rowcount = len(records)
            else:
                cursor = raw.executemany(sql, values) if many else raw.execute(sql, values)
                records = cursor.fetchall() if shape.returns_rows else []
                rowcount = len(records) if shape.returns_rows else cursor.rowcount
        except self.dialect.loaded_dbapi.Error as error:
            raise DBAPIError.instance(
                sql, values, error, self.dialect.loaded_dbapi.Error, dialect=self.dialect
            ) from error
        if dispatch.after_cursor_execute:
            dispatch.after_cursor_execute(sync, None, sql, values, None, many)
        return shape.result(records, rowcount)

    @asynccontextmanager
    async def begin_nested(self) -> AsyncIterator[None]:
        with self.sync.begin_nested():
            yield

    async def run_sync(self, fn: Callable[[SyncConnection], T]) -> T:
        return fn(self.sync)


def _many_shape(statement: Executable, rows: list[Any], dialect: Dialect) -> Shape | None:
    """The shape of a marked statement run once per row (sqlite3's executemany, or one run a
    row when it returns rows): rows of the same fields."""
    if not rows or not all(isinstance(row, dict) for row in rows):
        return None
    shape = direct_shape(statement, rows[0], dialect)
    if shape is None or shape.expanding:
        return None
    fields = rows[0].keys()
    return shape if all(row.keys() == fields for row in rows) else None
