"""PostgreSQL's way to give one statement a batch of rows: one array parameter a column,
``unnest``-ed side by side into a table the statement joins (one round trip, and one
prepared statement whatever the batch's size)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, func
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql.selectable import TableValuedAlias


def unnested(**columns: tuple[str, Any]) -> TableValuedAlias:
    """A table of ``columns``, each named by its key and given as (array parameter, element
    type): ``unnested(run_id=("run_ids", Integer))`` reads the ``run_ids`` parameter."""
    arrays = [
        bindparam(parameter, type_=postgresql.ARRAY(element))
        for parameter, element in columns.values()
    ]
    return func.unnest(*arrays).table_valued(*columns).render_derived()
