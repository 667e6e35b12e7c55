"""Shared shapes: request bodies, and the page every list answers with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from parley.reads import model
from parley.text import refuse_nul_within

ItemT = TypeVar("ItemT")
ValueT = TypeVar("ValueT")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        # Every text field of every body, by one rule (parley/text.py). Its Invalid is not a
        # ValueError, so it leaves pydantic as is: a 400 naming the field.
        refuse_nul_within(data)
        return data


# A name as the API takes it (see parley/naming.py, which checks it with a message in words).
NAME: dict[str, Any] = {"pattern": "^(?:[a-z][a-z0-9-]{0,38}[a-z0-9]|[a-z])$", "maxLength": 40}


def example(**values: Any) -> ConfigDict:
    """A body's example, shown by /docs and checked against the body by the tests."""
    return ConfigDict(json_schema_extra={"examples": [values]})


def capped(max_length: int | None, min_length: int = 0) -> dict[str, Any]:
    """A text's bounds as the schema documents them; the library enforces them with a message
    in words (pydantic's own would say less), so they are documented here, not checked twice."""
    bounds: dict[str, Any] = {} if max_length is None else {"maxLength": max_length}
    return bounds | ({"minLength": min_length} if min_length else {})


def ranged(minimum: int, maximum: int) -> dict[str, Any]:
    return {"minimum": minimum, "maximum": maximum}


class Page(BaseModel, Generic[ItemT]):
    """One page of a list. Every list of the API answers with one: ``?limit=N`` sets its size,
    and ``next`` (null on the last page) is passed back as ``?before=`` for the page after it.
    Keyset pagination: a page does not shift when rows are added meanwhile."""

    items: list[ItemT]
    next: str | None = Field(
        None, description="null on the last page; else pass it as ?before= for the next page"
    )


def page_of(found: model.Page[ValueT], convert: Callable[[ValueT], ItemT]) -> Page[ItemT]:
    return Page[ItemT](items=[convert(item) for item in found.items], next=found.next)
