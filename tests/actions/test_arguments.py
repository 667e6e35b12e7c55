"""What a caller gives an action, checked against the table: the one check that a model's tool
call, a rule's act, a node's deferred call and the in-process port all go through."""

from __future__ import annotations

import pytest

from parley.actions.arguments import bind
from parley.actions.table import ACTIONS, Param
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


@pytest.mark.parametrize(
    ("action", "param"),
    [(a.name, p) for a in ACTIONS.values() for p in a.params if p.max_length is not None],
)
def test_a_text_past_its_cap_is_refused_naming_it_and_one_at_the_cap_is_taken(
    action: str, param: Param
) -> None:
    """However the call comes (a model's tool call, a rule, the wire): a 1 GB write or a
    100 MB command is refused before anything acts on it."""
    cap = param.max_length
    assert cap is not None
    others = {p.name: "x" for p in ACTIONS[action].params if p.required and p is not param}
    assert bind(action, {**others, param.name: "y" * cap})[param.name] == "y" * cap
    with pytest.raises(Invalid, match=rf"{action}: {param.name} is longer than {cap} characters"):
        bind(action, {**others, param.name: "y" * (cap + 1)})
