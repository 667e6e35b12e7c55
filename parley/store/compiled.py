"""One cache of compiled statements for every engine of the process. SQLAlchemy keys its cache
by the dialect's instance, so each new engine compiled every statement again: the test suite
opens a store per test, and compiling took an eighth of its time (a served installation opens
one engine and gains nothing, nor loses). Engines made by ``create_engine`` are configured
alike for a dialect, so what tells their compiled statements apart is the dialect's kind and
what it learned from its server at first connect."""

from __future__ import annotations

from typing import Any

from sqlalchemy.util import LRUCache

SIZE = 2000  # statements kept, of every dialect (SQLAlchemy's own default is 500 per engine)


class SharedCompiled:
    """SQLAlchemy's ``compiled_cache`` execution option: its keys with the dialect instance
    replaced by what makes two dialects compile alike. SQLAlchemy only gets and sets in it."""

    def __init__(self, size: int = SIZE) -> None:
        self._cache: LRUCache[Any, Any] = LRUCache(size)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._cache.get(_alike(key), default)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._cache[_alike(key)] = value


def _alike(key: Any) -> Any:
    """(dialect, statement's key, …) as SQLAlchemy builds it, the dialect by its kind."""
    dialect, *rest = key
    learned = (dialect.server_version_info, dialect.default_schema_name)
    return (type(dialect), learned, *rest)


SHARED = SharedCompiled()
