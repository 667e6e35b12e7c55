"""A statement's values bound from its plan (worked out once per shape, ``shapes._plan_of``)
are the values SQLAlchemy's ``construct_params`` and bind processors give, for every statement
the store marks ``once``, on both dialects: the plan is the fast twin of that path
(docs/architecture.md, "Fast paths and their twins")."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Dialect, Insert
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.sql.elements import BindParameter

import parley.store.store  # noqa: F401  (every repository, and so every marked statement)
from parley.store.shapes import _ONCE, Shape

SAMPLES: dict[type, Any] = {
    int: 7,
    str: "o'hara",
    bool: True,
    float: 1.5,
    datetime: datetime(2026, 12, 8, 1, 2, 3, 456789, tzinfo=UTC),
    dict: {"a": [1, "b"]},
    list: [3, 4],
}


def _sample(bind: BindParameter[Any]) -> Any:
    """A value of the parameter's type (a type of ours, by the type it decorates)."""
    for kind in (bind.type, getattr(bind.type, "impl", None)):
        try:
            if kind is not None and kind.python_type in SAMPLES:
                return SAMPLES[kind.python_type]
        except NotImplementedError:
            continue
    return "x"


def _keys(statement: Any, dialect: Dialect) -> tuple[str, ...]:
    """The parameters the store gives the statement: its required ones (an insert without
    values of its own: every column a row names)."""
    if isinstance(statement, Insert) and not statement._values:
        return tuple(sorted(column.key for column in statement.table.columns))
    compiled = statement.compile(dialect=dialect)
    return tuple(sorted({bind.key for bind in compiled.bind_names if bind.required}))


def _shapes() -> list[tuple[str, Shape]]:
    shapes = []
    for dialect in (sqlite.dialect(), PGDialect_asyncpg()):  # type: ignore[no-untyped-call]
        for number, statement in enumerate(_ONCE.values()):
            try:
                shape = Shape(statement, _keys(statement, dialect), dialect)
            except Exception:  # a statement of the other dialect (its ON CONFLICT, …)
                continue
            if shape.plain and not shape.expanding:
                shapes.append((f"{dialect.name}-{number}", shape))
    return shapes


SHAPES = _shapes()


def test_nearly_every_marked_statement_is_bound_from_a_plan() -> None:
    planned = [shape for _, shape in SHAPES if shape._plan is not None]
    assert len(planned) >= len(SHAPES) * 0.9, len(planned)
    assert all(shape.positions for shape in planned if _keys_of(shape))  # what is compared


PLANNED = [(name, shape) for name, shape in SHAPES if shape._plan is not None]


@pytest.mark.parametrize("shape", [shape for _, shape in PLANNED], ids=[n for n, _ in PLANNED])
def test_a_plan_binds_what_construct_params_binds(shape: Shape) -> None:
    parameters = {key: _sample_for(shape, key) for key in _keys_of(shape)}
    unplanned = copy.copy(shape)
    unplanned._plan = None
    assert shape.bound(parameters) == unplanned.bound(parameters)


def _sample_for(shape: Shape, key: str) -> Any:
    """A value for parameter ``key``, of the type of a bind that takes it and has one."""
    samples = [_sample(bind) for bind in shape.compiled.bind_names if bind.key == key]
    return next((sample for sample in samples if sample != "x"), samples[0] if samples else 7)


def _keys_of(shape: Shape) -> list[str]:
    """The parameters the shape was made for."""
    return list(shape.compiled.column_keys or ())
