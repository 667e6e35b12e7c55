"""Hot statements built once at import (``once``), compiled once per shape and run on the
database's driver directly, with SQLAlchemy's own bind and result processing.

A statement through SQLAlchemy's execution (its execution context, its cursor result, its
cache lookup) costs more than the database answering it: measured on this project's 2-core
machine, ~70 µs of SQLAlchemy against ~15 µs of SQLite for a read by key, ~146 µs against
~52 µs of asyncpg alone on PostgreSQL. A turn or a received batch runs tens of statements.
``driver.py`` (PostgreSQL) and ``connection.py`` (SQLite) run a shape on their driver; anything
not marked, or not plain (Python-side column defaults), goes through SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from sqlalchemy import (
    JSON,
    CursorResult,
    Dialect,
    Executable,
    all_,
    any_,
    func,
    literal_column,
    select,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import result as sqlalchemy_result
from sqlalchemy.sql import operators, visitors
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import BinaryExpression, BindParameter, ClauseElement

S = TypeVar("S", bound=Executable)

# The statements that may run directly, by identity: module constants, alive for good.
_ONCE: dict[int, Executable] = {}


def once(statement: S) -> S:
    """Mark ``statement`` as built once at import: it runs on the driver directly."""
    _ONCE[id(statement)] = statement
    return statement


class Shape:
    """A statement compiled for one dialect and one set of parameter names: its SQL, how to
    bind, what rows come back and how to read them."""

    def __init__(self, statement: Executable, keys: tuple[str, ...], dialect: Dialect) -> None:
        assert isinstance(statement, ClauseElement)
        built: ClauseElement = statement
        if dialect.name == "sqlite":  # PostgreSQL measured no faster so: left as it was
            built = lists_as_json(constants_inline(statement, keys, dialect))
        elif dialect.name == "postgresql":
            built = lists_as_arrays(statement)
        compiled = built.compile(dialect=dialect, column_keys=list(keys))
        assert isinstance(compiled, SQLCompiler)
        self.compiled = compiled
        # Values made in Python at execution (column defaults) are SQLAlchemy's to fill in.
        self.plain = not (compiled.insert_prefetch or compiled.update_prefetch)
        self.expanding = bool(compiled.post_compile_params or compiled.literal_execute_params)
        self.positions = tuple(compiled.positiontup or ())
        self.binders: Mapping[str, Any] = compiled._bind_processors
        self._plan = None if self.expanding else _plan_of(compiled, keys, self.binders)
        columns = compiled._result_columns
        self.returns_rows = bool(columns)
        readers = [column.type._cached_result_processor(dialect, None) for column in columns]
        # Only the columns with a reader are touched in each row: most are read as they come.
        self.readers = [(index, reader) for index, reader in enumerate(readers) if reader]
        self.metadata = sqlalchemy_result.SimpleResultMetaData(
            [column.keyname for column in columns]
        )

    def bound(self, parameters: dict[str, Any] | None) -> tuple[str, list[Any]]:
        """The SQL and its positional values for ``parameters`` (None: none)."""
        parameters = parameters or {}
        if self._plan is not None:
            return self.compiled.string, [
                fixed if key is None else parameters[key] if binder is None
                else binder(parameters[key])
                for key, binder, fixed in self._plan
            ]  # fmt: skip
        binders: Mapping[str, Any]
        if self.expanding:
            expanded = self.compiled.construct_expanded_state(parameters)
            sql, values = expanded.statement, expanded.parameters
            # The expanded lists' processors on top of every other parameter's, as SQLAlchemy
            # merges them: the expanded state alone holds only the lists'.
            names = expanded.positiontup or ()
            binders = {**self.binders, **expanded.processors}
        else:
            sql, values = self.compiled.string, self.compiled.construct_params(parameters)
            names, binders = self.positions, self.binders
        bound = []
        for name in names:
            value, binder = values[name], binders.get(name)
            bound.append(value if binder is None else binder(value))
        return sql, bound

    def result(self, records: list[Any], rowcount: int) -> CursorResult[Any]:
        if self.readers:
            rows = [self._read(record) for record in records]
        elif records and not isinstance(records[0], tuple):  # asyncpg's records
            rows = [tuple(record) for record in records]
        else:
            rows = records  # sqlite3's, tuples already
        result: Any = sqlalchemy_result.IteratorResult(self.metadata, iter(rows))
        result.rowcount = rowcount
        # Rows and a rowcount: what the repositories read of a CursorResult.
        return cast(CursorResult[Any], result)

    def _read(self, record: Sequence[Any]) -> tuple[Any, ...]:
        row = list(record)
        for index, reader in self.readers:
            row[index] = reader(row[index])
        return tuple(row)


# Each positional value of a statement: the parameter it is taken from (its key) and its bind
# processor, or (key None) the statement's own value, bound once.
Plan = tuple[tuple[str | None, Any, Any], ...]


def _plan_of(
    compiled: SQLCompiler, keys: tuple[str, ...], binders: Mapping[str, Any]
) -> Plan | None:
    """Where ``construct_params`` takes each value from for parameters of ``keys``, worked out
    once: for a statement of several rows it cost more than binding them (a tenth of a
    receiving installation's CPU, bench/federation.py). None, and ``construct_params`` at each
    run, where that takes more than a look: a value made at execution, one the compiler
    collected, a parameter left out."""
    if compiled._collected_params or compiled._render_postcompile or compiled.positiontup is None:
        return None
    escaped = compiled.escaped_bind_names
    sources: dict[str, tuple[str | None, Any]] = {}
    for bind, name in compiled.bind_names.items():
        if bind.key in keys or name in keys:
            sources[escaped.get(name, name)] = (bind.key if bind.key in keys else name, None)
        elif bind.required or bind.callable is not None:
            return None
        else:
            sources[escaped.get(name, name)] = (None, bind.value)
    plan = []
    for name in compiled.positiontup:
        key, fixed = sources[name]
        binder = binders.get(name)
        if key is None and binder is not None:
            fixed = binder(fixed)
        plan.append((key, binder, fixed))
    return tuple(plan)


def returned_beside(value: Any, *where: Any) -> Any:
    """One value of what a row being written names (its agent's name, its node's), for its
    RETURNING. SQLite's RETURNING names columns without their tables (``id = agent_id``): a
    subquery reads one table, and names the written row's columns in full
    (``literal_column("runs.agent_id")``)."""
    return select(value).where(*where).scalar_subquery()


def constants_inline(statement: ClauseElement, keys: tuple[str, ...], dialect: Dialect) -> Any:
    """``statement`` with the values it was built with (``state = 'queued'``, a constant IN
    list) written into its SQL, the caller's parameters (``keys``) still bound. SQLite plans a
    statement again at each run when its plan hangs on a bound value, as a partial index's
    condition does: the scheduler's query of startable runs took 0.28 ms so, 0.02 ms with its
    constants written in."""

    def constant(element: Any, **_: Any) -> Any:
        if not isinstance(element, BindParameter) or element.key in keys:
            return None
        if element.value is None or element.callable is not None:
            return None
        literal = element.type.literal_processor(dialect)
        if literal is None:
            return None
        if element.expanding:
            listed = ", ".join(literal(value) for value in element.value)
            return literal_column(f"({listed})", type_=element.type)
        return literal_column(literal(element.value), type_=element.type)

    return visitors.replacement_traverse(statement, {}, constant)


def lists_as_arrays(statement: ClauseElement) -> Any:
    """``statement`` with each ``IN`` of a list made ``= ANY`` of one array parameter (``NOT
    IN``: ``!= ALL``): one SQL text whatever the list's length, so one prepared statement and
    one plan, and no SQL rendered anew at each run (SQLAlchemy expands a list into a parameter
    per item at execution: a tenth of the hub's CPU on PostgreSQL, measured with py-spy)."""

    def array(element: Any, **_: Any) -> Any:
        if (values := _listed(element)) is None:
            return None
        values.type = ARRAY(element.left.type)
        if element.operator is operators.in_op:
            return element.left == any_(values)
        return element.left != all_(values)

    return visitors.replacement_traverse(statement, {}, array)


def lists_as_json(statement: ClauseElement) -> Any:
    """SQLite's twin of ``lists_as_arrays``: each ``IN`` of a list made ``IN`` the values of one
    JSON array parameter (``json_each``), so that its SQL, and sqlite3's prepared statement, is
    one whatever the list's length (SQLAlchemy's expansion of a list cost 80 µs a statement)."""

    def json_list(element: Any, **_: Any) -> Any:
        if (values := _listed(element)) is None:
            return None
        values.type = JSON()
        each: Any = select(literal_column("value")).select_from(func.json_each(values))
        if element.operator is operators.in_op:
            return element.left.in_(each)
        return element.left.not_in(each)

    return visitors.replacement_traverse(statement, {}, json_list)


def _listed(element: Any) -> BindParameter[Any] | None:
    """If ``element`` is an ``IN`` (or ``NOT IN``) of a list of ints or strings: a copy of the
    list's parameter, no longer expanded, for one value holding the whole list."""
    if not isinstance(element, BinaryExpression):
        return None
    listed = element.right
    if not isinstance(listed, BindParameter) or not listed.expanding:
        return None
    if element.operator not in (operators.in_op, operators.not_in_op):
        return None
    if element.left.type.python_type not in (int, str):
        return None
    values = listed._clone()
    values.expanding = False
    return values


_SHAPES: dict[tuple[int, tuple[str, ...], str], Shape] = {}


def marked(statement: Executable) -> bool:
    """Whether ``statement`` was marked ``once`` (it may run on the driver directly)."""
    return id(statement) in _ONCE


def direct_shape(statement: Executable, parameters: Any, dialect: Dialect) -> Shape | None:
    """``statement``'s shape for these parameters if it may run on the driver directly."""
    if parameters is None:  # a statement of no parameters: the empty set of them
        parameters = {}
    if id(statement) not in _ONCE or not isinstance(parameters, dict):
        return None
    key = (id(statement), tuple(sorted(parameters)), dialect.name)
    shape = _SHAPES.get(key)
    if shape is None:
        shape = _SHAPES[key] = Shape(statement, key[1], dialect)
    return shape if shape.plain else None
