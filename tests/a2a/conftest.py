"""The A2A tests' Parley, served on SQLite (``tests/a2a/support.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.a2a.support import A2AHome, Gated, home


@pytest.fixture
def a2a_home(tmp_path: Path, sqlite_template: Path) -> Iterator[A2AHome]:
    with home(tmp_path, sqlite_template) as served:
        yield served


@pytest.fixture
def gated(tmp_path: Path, sqlite_template: Path, database_url: str) -> Iterator[Gated]:
    """A Parley on each store with the agent ``gated`` exposed, each turn ended by the test."""
    with home(
        tmp_path, sqlite_template, database_url, a2a_push_allowed_hosts="127.0.0.1"
    ) as served:
        yield Gated(served)
