"""The CLI's tables read at 80 columns, and in a pipe: the columns that matter, times short
(``--json`` keeps them whole), text wrapped rather than cut to "…"."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from parley.cli.output import fields, short_time, table
from tests.cli.test_runtime_commands import ok, ok_json
from tests.served import Served

FAILED = {
    "id": 12,
    "kind": "task_completion",
    "state": "failed",
    "attempts": 3,
    "next_attempt_at": "2026-12-03T20:21:05.123456+00:00",
    "destination": "task 45 of manager, through the outbox of this installation",
    "last_error": "the topic it answers was closed (task deleted by owner)",
}
SHORT_TIME = re.compile(r"^\d\d-\d\d \d\d:\d\d$")


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_piped_table_is_80_columns_wide_and_cuts_nothing(
    utc: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # captured output is not a terminal: a pipe
    table([FAILED], list(FAILED), "none")
    shown = capsys.readouterr().out
    lines = shown.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in shown
    assert lines[0].split() == ["id", "kind", "state", "attempts", "next_attempt",
                                "destination", "last_error"]  # fmt: skip
    assert "12-03 20:21" in lines[1]  # the time, short, in local time
    assert "task_completion" in lines[1]  # a word is never cut
    for text in (FAILED["destination"], FAILED["last_error"]):
        assert all(word in shown for word in str(text).split())  # wrapped, whole


def test_a_long_field_wraps_under_itself_at_80_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    engram = "You keep the minutes, in bullet points, with the decisions and who acts. " * 3
    path = "/srv/parley/" + "deeply/" * 12 + "echo.yaml"
    fields({"name": "scribe", "engram": engram + "\nSecond paragraph.", "brain": path},
           ["name", "engram", "brain"])  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "name    scribe"
    assert lines[1].startswith("engram  You keep the minutes")
    engram_lines = lines[1 : lines.index("        Second paragraph.") + 1]
    assert len(engram_lines) > 2 and all(len(line) <= 80 for line in engram_lines)
    assert all(line.startswith("        ") for line in engram_lines[1:])  # under the value
    assert (
        " ".join(line[8:] for line in engram_lines).split()
        == (engram + " Second paragraph.").split()
    )
    assert lines[-1] == f"brain   {path}"  # a path is never cut


def test_columns_wins_over_the_piped_width(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    table([FAILED], list(FAILED), "none")
    assert len(capsys.readouterr().out.splitlines()) == 2  # header and one line


def test_a_time_is_short_and_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # +05:30
    time.tzset()
    try:
        assert short_time("2026-12-03T20:21:05+00:00") == "12-04 01:51"
        assert short_time("2026-12-03T20:21:05") == "12-04 01:51"  # without a zone: UTC
        assert short_time("not a time") == "not a time"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_agent_changes_reads_at_80_columns(served: Served) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local")
    ok(served, "agent", "set", "scribe", "--engram", "You keep the minutes, " * 4)
    shown = ok(served, "agent", "changes", "scribe", COLUMNS="80")
    header, first, *_ = shown.splitlines()
    assert header.split() == ["changed", "changed_by", "setting", "old", "new"]
    assert SHORT_TIME.match(first[:11]), first
    assert "…" not in shown and max(map(len, shown.splitlines())) <= 80
    [change] = ok_json(served, "agent", "changes", "scribe")["items"]
    assert change["changed_at"].startswith("20")  # --json keeps the time whole
