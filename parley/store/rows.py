"""A result's rows read into one of the domain's dataclasses by position. A topic read by column
name cost ~13 µs (27 lookups of SQLAlchemy's ``Row`` by attribute, ~0.3 µs each); picked by
position, ~4 µs; a hop read three. Every read of topics and runs goes through it. The positions
are found once per shape of result, from its column names, so a statement that selects its
columns in another order reads right too."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from enum import Enum
from operator import itemgetter
from typing import Any, Generic, TypeVar

from sqlalchemy import Result

T = TypeVar("T")
E = TypeVar("E", bound=Enum)


class RowReader(Generic[T]):
    def __init__(
        self,
        model: type[T],
        convert: Mapping[str, Callable[[Any], Any]] | None = None,
        sources: Mapping[str, str] | None = None,
    ) -> None:
        """``model``'s fields from the columns of their names (or ``sources[field]``), each
        passed through ``convert[field]`` if given."""
        assert dataclasses.is_dataclass(model)
        self._model = model
        self._fields = [each.name for each in dataclasses.fields(model)]
        assert len(self._fields) > 1  # itemgetter of one position gives a value, not a tuple
        self._sources = [(sources or {}).get(name, name) for name in self._fields]
        self._convert = [(self._fields.index(name), how) for name, how in (convert or {}).items()]
        self._picks: dict[tuple[str, ...], Callable[[Any], Any]] = {}

    def all(self, result: Result[Any]) -> list[T]:
        pick = self._pick(tuple(result.keys()))
        return [self._made(pick(row)) for row in result]

    def one(self, row: Any) -> T:
        """One row, read as ``all`` reads each of a result's (for callers given a row alone)."""
        return self._made(self._pick(row._fields)(row))

    def _made(self, picked: tuple[Any, ...]) -> T:
        values = list(picked)
        for index, how in self._convert:
            values[index] = how(values[index])
        return self._model(*values)

    def _pick(self, keys: tuple[str, ...]) -> Callable[[Any], Any]:
        pick = self._picks.get(keys)
        if pick is None:
            missing = [source for source in self._sources if source not in keys]
            if missing:
                raise KeyError(f"{self._model.__name__} needs the columns {missing}")
            pick = self._picks[keys] = itemgetter(*(keys.index(s) for s in self._sources))
        return pick


def member_of(kind: type[E]) -> Callable[[Any], E]:
    """An enum's member from its stored value, looked up in a dict (Enum's own call goes
    through its metaclass: several times slower, on each state of each row)."""
    return {member.value: member for member in kind}.__getitem__
