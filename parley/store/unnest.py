"""A batch of rows given to one statement as one list parameter a column, read side by side as a
table the statement joins: one statement, and one prepared statement, whatever the batch's size.

PostgreSQL ``unnest``-s arrays; SQLite reads JSON arrays with ``json_each``, matched by their
index. One description of the statement for both stores: a batched write is not a loop of
single writes on one and a statement on the other."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, bindparam, column
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import TableClause
from sqlalchemy.sql.visitors import InternalTraversal


class Given(TableClause):
    """A table of rows given as list parameters, one a column."""

    inherit_cache = True
    # Its parameters are part of its cache key: two batches of other names are two statements.
    _traverse_internals = [  # noqa: RUF012 (SQLAlchemy's own class attribute)
        *TableClause._traverse_internals,
        ("parameters", InternalTraversal.dp_string_list),
    ]

    def __init__(self, name: str, columns: dict[str, tuple[str, Any]]) -> None:
        super().__init__(name, *(column(key, element) for key, (_, element) in columns.items()))
        self.parameters = [parameter for parameter, _ in columns.values()]


def unnested(**columns: tuple[str, Any]) -> Given:
    """A table of ``columns``, each named by its key and given as (list parameter, element
    type): ``unnested(run_id=("run_ids", Integer))`` reads the ``run_ids`` parameter."""
    return Given("given", columns)


@compiles(Given, "postgresql")
def _as_arrays(given: Given, compiler: SQLCompiler, **kw: Any) -> str:
    if not kw.get("asfrom"):
        return compiler.preparer.quote(given.name)
    arrays = ", ".join(
        compiler.process(bindparam(parameter, type_=postgresql.ARRAY(each.type)), **kw)
        for parameter, each in zip(given.parameters, given.columns, strict=True)
    )
    names = ", ".join(compiler.preparer.quote(each.name) for each in given.columns)
    return f"unnest({arrays}) AS {compiler.preparer.quote(given.name)}({names})"


@compiles(Given, "sqlite")
def _as_json(given: Given, compiler: SQLCompiler, **kw: Any) -> str:
    if not kw.get("asfrom"):
        return compiler.preparer.quote(given.name)
    lists = [
        (f"j{n}", compiler.process(bindparam(parameter, type_=JSON), **kw))
        for n, parameter in enumerate(given.parameters)
    ]
    (first, first_list), *rest = lists
    values = ", ".join(
        f"{alias}.value AS {compiler.preparer.quote(each.name)}"
        for (alias, _), each in zip(lists, given.columns, strict=True)
    )
    joins = "".join(
        f" JOIN json_each({listed}) AS {alias} ON {alias}.key = {first}.key"
        for alias, listed in rest
    )
    read = f"SELECT {values} FROM json_each({first_list}) AS {first}{joins}"
    return f"({read}) AS {compiler.preparer.quote(given.name)}"
