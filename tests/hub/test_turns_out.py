"""The turns sent off together, until their ends come back (parley/hub/turns_out.py): what
the hub's consumer of turn ends waits for before it records a batch."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from parley.hub.turns_out import FORGET_SECONDS, QUICK_SECONDS, TurnsOut


class Ticks:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_end_whose_group_is_still_out_waits_for_the_rest() -> None:
    out = TurnsOut(Ticks())
    out.sent([1, 2, 3])
    assert out.more_due([1])
    assert out.more_due([1, 2])
    assert not out.more_due([1, 2, 3])


def test_ends_that_came_back_are_not_waited_for() -> None:
    out = TurnsOut(Ticks())
    out.sent([1, 2, 3])
    out.ended([2, 3])
    assert not out.more_due([1])


def test_a_lone_turn_and_an_unknown_run_wait_for_nothing() -> None:
    out = TurnsOut(Ticks())
    out.sent([7])
    assert not out.more_due([7])
    assert not out.more_due([99])  # sent before a restart, say
    assert len(out) == 0


def test_each_group_waits_for_its_own_members_only() -> None:
    out = TurnsOut(Ticks())
    out.sent([1, 2])
    out.sent([3, 4])
    assert not out.more_due([3, 4])  # 1 and 2 are out, but they are not 3's and 4's
    assert out.more_due([1, 3, 4])


def test_a_run_sent_again_leaves_its_old_group() -> None:
    """A turn its node did not take is queued again and sent off with others."""
    out = TurnsOut(Ticks())
    out.sent([1, 2])
    out.sent([2, 5])
    assert not out.more_due([1])
    assert out.more_due([2])


def test_a_group_of_slow_turns_is_not_waited_for() -> None:
    """Turns that take longer than a moment end seconds apart whatever the broker: the first
    end of such a group is recorded without waiting for the others."""
    ticks = Ticks()
    out = TurnsOut(ticks)
    out.sent([1, 2])
    ticks.now += QUICK_SECONDS / 2
    assert out.more_due([1])
    ticks.now += QUICK_SECONDS
    assert not out.more_due([1])


def test_a_group_member_that_never_ends_is_forgotten() -> None:
    """A turn stopped without a word, or lost with its node: after a while nothing waits for
    it, and the store of groups does not grow for ever."""
    ticks = Ticks()
    out = TurnsOut(ticks)
    out.sent([1, 2])
    out.ended([1])
    ticks.now += FORGET_SECONDS + 1
    out.sent([3, 4])
    assert not out.more_due([2]) and len(out) == 2


@given(
    groups=st.lists(st.sets(st.integers(1, 40), min_size=1, max_size=6), max_size=8),
    ended=st.sets(st.integers(1, 40)),
    at_hand=st.sets(st.integers(1, 40), max_size=6),
)
def test_more_is_due_exactly_when_a_groupmate_of_an_end_at_hand_is_out(
    groups: list[set[int]], ended: set[int], at_hand: set[int]
) -> None:
    """Against a plain model: a run is out in the last group it was sent in (a lone turn is in
    none) until its end comes back."""
    out = TurnsOut(Ticks())
    group_of: dict[int, int] = {}  # run still out -> the number of its group
    for number, group in enumerate(groups):
        out.sent(group)
        for run in group:
            group_of.pop(run, None)
            if len(group) > 1:
                group_of[run] = number
    out.ended(ended)
    for run in ended:
        group_of.pop(run, None)
    waited_for = {group_of[run] for run in at_hand if run in group_of}
    expected = any(number in waited_for and run not in at_hand for run, number in group_of.items())
    assert out.more_due(at_hand) == expected
