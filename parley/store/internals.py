"""The library internals the store's direct paths read, probed at their first use.

``connection.py`` (sqlite3) and ``driver.py`` (asyncpg) run the statements marked ``once`` on
the driver, reading attributes SQLAlchemy does not promise to keep (``shapes.py``'s compiled
statements, the asyncpg adapter's). pyproject bounds SQLAlchemy to the minor they were tested
with; should one still be missing, the store says which, once, and runs every statement
through SQLAlchemy's own execution from then on: slower, the same rows. The setting
``direct_driver`` (``PARLEY_DIRECT_DRIVER=0``) takes that path from the start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Dialect,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    select,
)
from sqlalchemy.engine import result as sqlalchemy_result
from sqlalchemy.sql.elements import BindParameter

log = logging.getLogger(__name__)

# shapes.py: how a compiled statement binds its parameters and reads its rows.
COMPILED = (
    "_bind_processors",
    "_result_columns",
    "positiontup",
    "construct_params",
    "construct_expanded_state",
    "bind_names",
    "escaped_bind_names",
    "_render_postcompile",
    "_collected_params",
    "insert_prefetch",
    "update_prefetch",
    "post_compile_params",
    "literal_execute_params",
)
COLUMN_TYPE = ("_cached_result_processor", "literal_processor")
BIND = ("_clone",)  # lists_as_arrays (PostgreSQL) retypes a copy of a list's parameter
RESULT_MODULE = ("IteratorResult", "SimpleResultMetaData")
# connection.py: statement listeners called as SQLAlchemy calls them, and sqlite3 itself.
SYNC_CONNECTION = ("dispatch", "connection")
# driver.py: SQLAlchemy's adapter around the asyncpg connection, and the pool it came from.
ASYNCPG_ADAPTER = (
    "_connection",
    "_execute_mutex",
    "_handle_exception",
    "_transaction",
    "_start_transaction",
    "autocommit",
)
POOL = ("_invalidate",)

_PROBE_TABLE = Table(
    "probe", MetaData(), Column("id", Integer, primary_key=True), Column("name", String)
)


def lacking(named: Iterable[tuple[str, Any, tuple[str, ...]]]) -> str | None:
    """The first attribute missing, as ``owner.attribute``; None when all are there."""
    for owner, thing, attributes in named:
        for attribute in attributes:
            if not hasattr(thing, attribute):
                return f"{owner}.{attribute}"
    return None


def shapes_lack(dialect: Dialect) -> str | None:
    """What shapes.py reads of a statement compiled for ``dialect``, probed on a small one."""
    names: BindParameter[str] = bindparam("names", expanding=True)
    statement = select(_PROBE_TABLE.c.id).where(_PROBE_TABLE.c.name.in_(names))
    compiled = statement.compile(dialect=dialect)
    return lacking(
        [
            (type(compiled).__name__, compiled, COMPILED),
            ("Integer", _PROBE_TABLE.c.id.type, COLUMN_TYPE),
            ("BindParameter", names, BIND),
            ("sqlalchemy.engine.result", sqlalchemy_result, RESULT_MODULE),
        ]
    )


def sqlite3_path_lacks(sync: Connection) -> str | None:
    """What connection.py's direct path reads: shapes, and the sync connection's parts."""
    return lacking([("Connection", sync, SYNC_CONNECTION)]) or shapes_lack(sync.dialect)


def asyncpg_path_lacks(adapted: Any, pool: Any, dialect: Dialect) -> str | None:
    """What driver.py's direct path reads: shapes, the asyncpg adapter and the pool."""
    return lacking(
        [
            (type(adapted).__name__, adapted, ASYNCPG_ADAPTER),
            (type(pool).__name__, pool, POOL),
        ]
    ) or shapes_lack(dialect)


class DirectDriver:
    """Whether a store's marked statements run on the driver directly: as the setting says,
    and no more once a probe found an internal missing (said once, as a warning)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._probed = False

    def usable(self, probe: Callable[[], str | None]) -> bool:
        """True while the direct path may run; ``probe`` runs at the first call only."""
        if not self.enabled:
            return False
        if self._probed:
            return True
        missing = probe()
        if missing is not None:
            self.enabled = False
            log.warning(
                "SQLAlchemy's %s is missing (a SQLAlchemy Parley was not tested with?): the"
                " store runs every statement through SQLAlchemy's own execution, slower with"
                " the same results; install the versions of requirements.lock to run it fast",
                missing,
            )
            return False
        self._probed = True
        return True
