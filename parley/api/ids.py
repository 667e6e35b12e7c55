"""Ids in a path or a query: ASCII digits, 1 to the largest id a store holds. Anything else is a
clear 400 before a route runs: never a unicode digit ``int`` cannot read, nor a number the store
cannot hold."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import BeforeValidator

from parley.numbers import MAX_ID, ascii_number

WRITTEN = f"a whole number from 1 to {MAX_ID}, in the digits 0-9"


def _ascii_id(value: object) -> object:
    if isinstance(value, str) and not ascii_number(value):  # None, or 0
        raise ValueError(f"must be {WRITTEN}")
    return value


Id = Annotated[int, BeforeValidator(_ascii_id), Path(ge=1, le=MAX_ID, description=WRITTEN)]
OptionalId = Annotated[
    int | None, BeforeValidator(_ascii_id), Query(ge=1, le=MAX_ID, description=WRITTEN)
]
