"""What a caller gives an action, checked against the table: the one check that a model's tool
call, a rule's act, a node's deferred call and the in-process port all go through."""

from __future__ import annotations

import pytest

from parley.actions.arguments import bind
from parley.errors import Invalid


def test_arguments_are_taken_as_the_table_defines_them_with_defaults_filled_in() -> None:
    assert bind("spawn", {"agent": "bob", "text": "sum it"}) == {
        "agent": "bob",
        "text": "sum it",
        "thread": False,
    }
    assert bind("complete", {"result": "done", "failed": True}) == {
        "result": "done",
        "failed": True,
    }


@pytest.mark.parametrize(
    ("name", "given", "refusal"),
    [
        ("shout", {"text": "x"}, "there is no action 'shout'; the actions are send, report,"),
        ("send", {"to": "bob"}, "send needs text"),
        ("send", {}, "send needs to, text"),
        ("remember", {"note": "x", "bogus": "y"}, "remember takes no argument 'bogus'"),
        ("send", {"to": 3, "text": "x"}, "send: to must be a string, not 3"),
        ("spawn", {"agent": "a", "text": "x", "thread": "yes"}, 'must be a boolean, not "yes"'),
        ("report", {"text": None}, "report: text must be a string, not null"),
        ("report", {"text": "a\x00b"}, "report: text contains a NUL byte"),
    ],
)
def test_a_wrong_missing_or_extra_argument_is_refused_saying_which(
    name: str, given: dict[str, object], refusal: str
) -> None:
    with pytest.raises(Invalid) as refused:
        bind(name, given)
    assert refusal in refused.value.message
