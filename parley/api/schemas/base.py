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
