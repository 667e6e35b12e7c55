"""The web bench's own smoke test, on a tiny SQLite fill: it signs in as an owner and as a
member, times every page (or says it is not there yet) and prints a line per page and viewer
with numbers in it. No clock thresholds: the figures only have to be figures."""

from __future__ import annotations

import re

import pytest

from bench.bulk import Size
from bench.web import Line, measure, older, report

TINY = 0.002  # 20 agents, 200 agent conversations, 2,000 messages
ROW = re.compile(r"^\| `(?P<page>[^`]+)` \| (?P<viewer>owner|member) \| (?P<p50>[^|]+) \|")


async def test_every_page_gets_a_line_per_viewer_with_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = await measure("sqlite", TINY, repeat=2, chosen=[])
    report("sqlite", Size.of(TINY), lines)
    rows = [
        found.groupdict() for found in map(ROW.match, capsys.readouterr().out.splitlines()) if found
    ]
    table = {(row["page"], row["viewer"]): row for row in rows}
    routes = [line.page for line in lines]
    for page in ["/", "/tasks", "/runs", "/turns", "/agents", "/nodes", "/people", "/channels"]:
        assert page in routes
        assert {(page, "owner"), (page, "member")} <= set(table)
    assert any(page.startswith("/chat/agent") for page in routes)
    assert any(re.fullmatch(r"/tasks/\d+", page) for page in routes)
    assert "/tasks?status=open" in routes and "/agents?lifecycle=active" in routes
    assert not [line for line in lines if line.error]
    timed = [line for line in lines if line.status == 200]
    assert {line.page for line in timed} >= {"/"}  # the home page is there already
    for line in timed:
        assert 0 < line.p50_ms <= line.p99_ms
        float(table[line.page, line.viewer]["p50"])
    for line in lines:
        if line.status in (403, 404):
            assert table[line.page, line.viewer]["p50"].strip() == "-"


async def test_only_the_chosen_pages_are_timed() -> None:
    lines = await measure("sqlite", TINY, repeat=1, chosen=["/", "/agents/{name}"])
    pages = {line.page for line in lines}
    assert "/" in pages and len(pages) == 2
    assert any(re.fullmatch(r"/agents/agent\d+", page) for page in pages)
    assert [line.viewer for line in lines if line.page == "/"] == ["owner", "member"]


def test_the_older_link_is_the_lists_second_page() -> None:
    body = '<p class="more"><a href="/tasks?status=open&amp;before=42">Older</a></p>'
    assert older("/tasks", body) == "/tasks?status=open&before=42"
    assert older("/runs", '<a href="?before=7">Older</a>') == "/runs?before=7"
    assert older("/runs", "<p>nothing older</p>") is None


def test_a_miss_and_an_error_fail_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    size = Size.of(TINY)
    assert report("sqlite", size, [Line("/", "owner", 200, 1.0, 2.0), Line("/x", "owner", 404)])
    assert not report("sqlite", size, [Line("/", "owner", 200, 40.0, 51.0)])
    assert not report("sqlite", size, [Line("/", "member", 500)])
    out = capsys.readouterr().out
    assert "| `/x` | owner | - | - | not there |" in out
    assert "| 40.0 | 51.0 | ! |" in out and "! error 500" in out
