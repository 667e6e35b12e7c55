"""Times on the page: how long ago or how soon, worded for a person, the full time on hover and
in the element's ``datetime`` for machines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.web.render import when

NOW = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("offset", "said"),
    [
        (timedelta(seconds=-20), "just now"),
        (timedelta(minutes=-5), "5 min ago"),
        (timedelta(hours=-3, minutes=-59), "3 h ago"),
        (timedelta(days=-1), "1 day ago"),
        (timedelta(days=-6), "6 days ago"),
        (timedelta(days=-40), "2026-09-22"),
        (timedelta(seconds=20), "in a moment"),
        (timedelta(minutes=90), "in 1 h"),
        (timedelta(days=2, hours=1), "in 2 days"),
    ],
)
def test_a_moment_is_said_as_how_long_ago_or_how_soon(offset: timedelta, said: str) -> None:
    moment = NOW + offset
    shown = str(when(moment, NOW))
    assert f">{said}</time>" in shown
    assert f'title="{moment:%Y-%m-%d %H:%M:%S}"' in shown
    assert f'datetime="{moment.isoformat()}"' in shown


@given(st.integers(min_value=-(10**9), max_value=10**9))
def test_every_moment_reads_as_one_time_element(seconds: int) -> None:
    shown = str(when(NOW + timedelta(seconds=seconds), NOW))
    assert shown.startswith("<time ") and shown.endswith("</time>") and shown.count("<") == 2


def test_no_moment_shows_nothing() -> None:
    assert str(when(None, NOW)) == ""
