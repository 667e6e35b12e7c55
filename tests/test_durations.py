"""Durations as operators type them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.durations import format_duration, parse_duration
from parley.errors import Invalid


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("30m", 1800),
        ("2h", 7200),
        ("1d", 86400),
        ("1h30m", 5400),
        (" 2H ", 7200),
        ("1w", 604800),
    ],
)
def test_durations_parse(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "soon", "5", "h2", "1.5h", "-1h", "0m", "99999d"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(Invalid):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"), [(5400, "1h30m"), (86400, "1d"), (45, "45s"), (0, "0s")]
)
def test_durations_format_back(seconds: int, text: str) -> None:
    assert format_duration(seconds) == text


@given(
    number=st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=6),
    unit=st.sampled_from("smhdw"),
)
def test_a_duration_in_other_digits_than_ascii_is_refused(number: str, unit: str) -> None:
    """'\uff11h' (a full-width one) is not an hour: ``\\d`` would read any script's digits."""
    if number.isascii():
        return
    with pytest.raises(Invalid, match="is not a duration"):
        parse_duration(number + unit)
