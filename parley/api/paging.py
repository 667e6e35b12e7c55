"""The query parameters of every list: ``limit`` and ``before`` (the cursor of the page
before, as its ``next`` gave it)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from parley.reads.model import DEFAULT_LIMIT, MAX_LIMIT

Limit = Annotated[
    int,
    Query(ge=1, le=MAX_LIMIT, description=f"page size, 1 to {MAX_LIMIT}"),
]
Before = Annotated[
    str | None,
    Query(description="the 'next' of the page before; left out, the list starts at its top"),
]

__all__ = ["DEFAULT_LIMIT", "Before", "Limit"]
