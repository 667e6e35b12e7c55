"""The A2A tests' Parley, served on SQLite (``tests/a2a/support.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.a2a.support import A2AHome, home


@pytest.fixture
def a2a_home(tmp_path: Path, sqlite_template: Path) -> Iterator[A2AHome]:
    with home(tmp_path, sqlite_template) as served:
        yield served
