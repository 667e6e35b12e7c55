"""Backoff: the bound doubles per attempt up to its cap; the wait is drawn between zero and it."""

from __future__ import annotations

from datetime import timedelta

from parley.deliveries.backoff import Backoff


def test_the_bound_doubles_per_attempt_up_to_the_cap() -> None:
    backoff = Backoff(base_seconds=1, cap_seconds=16)
    assert [backoff.bound(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 16, 16]
    assert backoff.bound(10_000) == 16  # no overflow however long an item keeps failing


def test_the_wait_is_drawn_from_its_bound() -> None:
    drawn: list[float] = []

    def half(bound: float) -> float:
        drawn.append(bound)
        return bound / 2

    backoff = Backoff(base_seconds=2, cap_seconds=60, draw=half)
    assert backoff.delay(3) == timedelta(seconds=4)
    assert drawn == [8]


def test_full_jitter_spreads_waits_between_zero_and_the_bound() -> None:
    backoff = Backoff(base_seconds=1, cap_seconds=8)
    waits = [backoff.delay(4).total_seconds() for _ in range(200)]
    assert all(0 <= wait <= 8 for wait in waits)
    assert len(set(waits)) > 100  # drawn, not fixed: items failing together come back apart
