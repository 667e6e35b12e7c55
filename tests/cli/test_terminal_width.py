"""The CLI's tables are as wide as the terminal when they are printed (``COLUMNS`` when it is
set), not as it was when the CLI's output module was first imported: one process may run many
commands (a test suite, whose pytest-xdist workers start with ``COLUMNS=80``)."""

from __future__ import annotations

import importlib

import pytest

from parley.cli import output

WIDE = {"id": 1, "session": "topic:1", "target": "web:home:1 (in c1)", "status": "active"}


def test_a_table_follows_the_width_it_is_printed_at(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "30")
    monkeypatch.setenv("LINES", "10")
    fresh = importlib.reload(output)  # as if first imported in that environment
    try:
        fresh.table([WIDE], list(WIDE), "none")
        narrow = capsys.readouterr().out
        assert "web:home:1 (in c1)" not in narrow  # 30 columns cut it
        monkeypatch.setenv("COLUMNS", "200")
        fresh.table([WIDE], list(WIDE), "none")
        assert "web:home:1 (in c1)" in capsys.readouterr().out
    finally:
        monkeypatch.undo()
        importlib.reload(output)
