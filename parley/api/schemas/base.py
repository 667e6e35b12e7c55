"""Shared shapes of request bodies."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

ItemT = TypeVar("ItemT")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Page(BaseModel, Generic[ItemT]):
    """One page of a list. Every list of the API answers with one: ``?limit=N`` sets its size,
    and ``next`` (null on the last page) is passed back as ``?before=`` for the page after it.
    Keyset pagination: a page does not shift when rows are added meanwhile."""

    items: list[ItemT]
    next: str | None = None
