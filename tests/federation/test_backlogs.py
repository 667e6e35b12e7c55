"""The receiver's bound on each connection's backlog: counting the backlog only when a batch may
bring it past the limit refuses exactly the text that counting it for every batch refused."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from parley.federation.backlogs import Backlogs

# A step: a batch of N texts comes (N > 0), or runs take up -N of the waiting texts (N <= 0).
STEPS = st.lists(st.integers(min_value=-30, max_value=30), max_size=60)


def _accepted_with_counting_every_time(limit: int, steps: list[int]) -> list[int]:
    waiting, accepted = 0, []
    for step in steps:
        if step <= 0:
            waiting -= min(waiting, -step)
            continue
        taken = max(0, min(step, limit - waiting))
        waiting += taken
        accepted.append(taken)
    return accepted


def _accepted_with_the_bound(limit: int, steps: list[int]) -> tuple[list[int], int]:
    backlogs, waiting, accepted, counts = Backlogs(), 0, [], 0
    for step in steps:
        if step <= 0:
            waiting -= min(waiting, -step)
            continue
        room = backlogs.room(7, limit, step)
        if room is None:
            counts += 1
            backlogs.counted(7, waiting)
            room = limit - waiting
        taken = max(0, min(step, room))
        waiting += taken
        backlogs.accepted(7, taken)
        accepted.append(taken)
    return accepted, counts


@given(st.integers(min_value=1, max_value=100), STEPS)
def test_the_bound_refuses_what_counting_every_batch_refused(limit: int, steps: list[int]) -> None:
    accepted, _ = _accepted_with_the_bound(limit, steps)
    assert accepted == _accepted_with_counting_every_time(limit, steps)


def test_far_from_the_limit_the_backlog_is_counted_once() -> None:
    _, counts = _accepted_with_the_bound(10_000, [5] * 100)
    assert counts == 1


def test_near_the_limit_it_is_counted_again_and_text_taken_up_makes_room() -> None:
    accepted, counts = _accepted_with_the_bound(10, [6, 6, -10, 6])
    assert accepted == [6, 4, 6]  # the third batch fits once the runs took the text up
    assert counts == 3


def test_connections_are_bounded_apart() -> None:
    backlogs = Backlogs()
    backlogs.counted(1, 9)
    assert backlogs.room(1, 10, 2) is None
    assert backlogs.room(2, 10, 2) is None  # never counted
    backlogs.counted(2, 0)
    assert backlogs.room(2, 10, 2) == 10
