"""What the store does meanwhile: transactions, statements, time spent waiting in BEGIN / COMMIT."""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


@dataclass
class SqlCounters:
    """Transactions and statements seen by the store's engine while ``recording``."""

    commits: int = 0
    rollbacks: int = 0
    statements: int = 0
    begin_wait: float = 0.0  # seconds inside BEGIN IMMEDIATE: waiting for SQLite's write lock
    held: float = 0.0  # seconds from having begun to asking for the commit, summed
    texts: Counter[str] = field(default_factory=Counter)
    keep_texts: bool = False
    recording: bool = False
    _begun_at: dict[int, float] = field(default_factory=dict)
    _started_at: dict[int, float] = field(default_factory=dict)

    def attach(self) -> None:
        """Listen on every engine, from before any exists: adding listeners to a running engine
        can mutate a listener deque that a suspended greenlet is iterating over."""
        global _counting
        _counting = self
        if _listening:
            return
        _listening.append(True)
        # Listeners run in the order added: parley's own "begin" (BEGIN IMMEDIATE) comes first.
        event.listen(Engine, "begin", lambda conn: _counting._begun(conn))
        event.listen(Engine, "commit", lambda conn: _counting._ended(conn, "commit"))
        event.listen(Engine, "rollback", lambda conn: _counting._ended(conn, "rollback"))
        event.listen(Engine, "before_cursor_execute", lambda c, *a: _counting._before(c, a[1]))
        event.listen(Engine, "after_cursor_execute", lambda c, *a: _counting._after(c, a[1]))

    def _begun(self, conn: Any) -> None:
        self._begun_at[id(conn)] = time.perf_counter()

    def _ended(self, conn: Any, how: str) -> None:
        begun = self._begun_at.pop(id(conn), None)
        if not self.recording:
            return
        if how == "commit":
            self.commits += 1
        else:
            self.rollbacks += 1
        if begun is not None:
            self.held += time.perf_counter() - begun

    def _before(self, conn: Any, statement: str) -> None:
        self._started_at[id(conn)] = time.perf_counter()

    def _after(self, conn: Any, statement: str) -> None:
        started = self._started_at.pop(id(conn), None)
        if not self.recording:
            if statement.startswith("BEGIN"):
                self._begun_at[id(conn)] = time.perf_counter()
            return
        self.statements += 1
        if statement.startswith("BEGIN") and started is not None:
            now = time.perf_counter()
            self.begin_wait += now - started
            self._begun_at[id(conn)] = now  # SQLite's write lock is held from here
        if self.keep_texts:
            self.texts[_shorten(statement)] += 1


_listening: list[bool] = []
_counting = SqlCounters()


def _shorten(statement: str) -> str:
    flat = re.sub(r"\s+", " ", statement).strip()
    flat = re.sub(r"\(\$?\??\d*(, \$?\??\d*)*\)", "(…)", flat)
    return flat[:110]
