"""Subjects with wildcards as NATS reads them (``parley/broker/subjects.py``), and the node a
per-node subject names (``messages.node_of``)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from parley.broker.subjects import has_wildcards, matches, overlap
from parley.node.messages import node_of, run_events_subject, run_outcomes_subject

TOKENS = ["a", "b"]
# Every subject of up to five tokens of TOKENS: enough to find what two patterns of up to four
# tokens share.
SUBJECTS = [
    ".".join(tokens) for size in range(1, 6) for tokens in itertools.product(TOKENS, repeat=size)
]
_pattern = st.lists(st.sampled_from([*TOKENS, "*"]), min_size=1, max_size=3).flatmap(
    lambda tokens: st.sampled_from([".".join(tokens), ".".join([*tokens, ">"])])
)


def test_a_star_is_one_token_and_a_tail_one_or_more() -> None:
    assert matches("a.*", "a.b") and not matches("a.*", "a") and not matches("a.*", "a.b.c")
    assert matches("a.>", "a.b") and matches("a.>", "a.b.c") and not matches("a.>", "a")
    assert matches("a.b", "a.b") and not matches("a.b", "a.c")
    assert has_wildcards("a.*") and has_wildcards("a.>") and not has_wildcards("a.b*")


@given(first=_pattern, second=_pattern)
def test_two_patterns_overlap_when_a_subject_matches_both(first: str, second: str) -> None:
    shared = any(matches(first, s) and matches(second, s) for s in SUBJECTS)
    assert overlap(first, second) == shared == overlap(second, first)


def test_a_per_node_subject_names_its_node_and_nothing_else_does() -> None:
    assert node_of(run_outcomes_subject("gpu1"), run_outcomes_subject) == "gpu1"
    assert node_of(run_events_subject("local"), run_events_subject) == "local"
    assert node_of(run_events_subject("gpu1"), run_outcomes_subject) is None
    assert node_of("parley.hub.run-outcomes", run_outcomes_subject) is None
    assert node_of("parley.hub.run-outcomes.", run_outcomes_subject) is None
    assert node_of("parley.hub.run-outcomes.a.b", run_outcomes_subject) is None
    assert node_of("parley.hub.run-outcomes.*", run_outcomes_subject) is None
