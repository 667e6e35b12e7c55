"""Numbers read from outside are ASCII digits, bounded: a superscript, a full-width or an
Arabic-Indic digit, or thousands of digits, is a clear 400 (or the 404 of what cannot exist),
never a 500 from ``int`` and never read as a number."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from parley.errors import Invalid
from parley.numbers import MAX_ID, ascii_number, whole_number
from parley.reads.cursors import TASKS, encode
from tests.support import Harness
from tests.web.support import signed_in

# Digits of any script (Nd), superscripts and the like (No), and ASCII ones, mixed.
DIGITS = st.text(
    st.characters(categories=["Nd", "No"]) | st.sampled_from("0123456789"),
    min_size=1,
    max_size=12,
)
HUGE = "9" * 5000
ID_ROUTES = (
    "/api/v1/tasks/{}",
    "/api/v1/runs/{}",
    "/api/v1/topics/{}",
    "/api/v1/bindings/{}",
    "/api/v1/channels/web/web/conversations/{}",
    "/api/v1/runs?topic={}",
    "/api/v1/tasks?parent={}",
    "/api/v1/agent-conversations?root={}",
)


def _is_id(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) < 20 and 1 <= int(text) <= MAX_ID


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(number=DIGITS)
@example(number="\u00b9")  # superscript one
@example(number="\uff11")  # full-width one
@example(number=HUGE)
@example(number=str(MAX_ID + 1))
async def test_an_id_in_other_digits_or_past_any_store_is_a_400(
    parley: Harness, number: str
) -> None:
    for route in ID_ROUTES:
        answer = await parley.owner.get(route.format(quote(number)))
        if _is_id(number):
            assert answer.status_code in {200, 404}, (route, answer.text)
        else:
            assert answer.status_code == 400, (route, number, answer.text)
            assert "in the digits 0-9" in answer.json()["message"]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(number=DIGITS)
@example(number="\u00b9")
@example(number=HUGE)
async def test_a_conversation_named_in_other_digits_or_past_any_id_is_not_found(
    parley: Harness, number: str
) -> None:
    answer = await parley.owner.get(f"/api/v1/conversations/{quote(number)}")
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"] == "not_found"
    assert len(answer.json()["message"]) < 100  # a 5,000-digit id is not echoed whole


async def test_a_list_cursor_past_any_id_is_refused(parley: Harness) -> None:
    for key in (MAX_ID + 1, 10**4000, -1):
        answer = await parley.owner.get(f"/api/v1/tasks?before={encode(TASKS, key)}")
        assert answer.status_code == 400, answer.text
        assert "is not a cursor of the tasks list" in answer.json()["message"]
    deliveries = await parley.owner.get("/api/v1/deliveries?before=%C2%B9")
    assert deliveries.status_code == 400 and "not a cursor" in deliveries.text


async def test_the_hire_form_refuses_a_superscript_number_with_the_form_again(
    parley: Harness,
) -> None:
    async with signed_in(parley) as browser:
        for given_number in ("\u00b2", "\uff12", HUGE, "0"):
            answer = await browser.post(
                "/agents", {"name": "scribe", "node": "local", "max_sessions": given_number}
            )
            assert answer.status_code == 400, answer.text
            assert "max sessions must be a whole number from 1 to" in answer.text
    agents = await parley.owner.get("/api/v1/agents")
    assert [agent["name"] for agent in agents.json()["items"]] == ["node:local"]


@given(text=DIGITS)
def test_only_ascii_digits_are_a_number(text: str) -> None:
    number = ascii_number(text)
    assert number == (int(text) if text.isascii() and int(text) <= MAX_ID else None)  # 12 digits


def test_a_whole_number_names_its_field_and_range() -> None:
    assert whole_number(" 7 ", "max sessions", 1, 64) == 7
    for text in ("\u00b2", "65", "0", "-1", "1_0", "+3", HUGE):
        with pytest.raises(Invalid, match=r"^max sessions must be a whole number from 1 to 64$"):
            whole_number(text, "max sessions", 1, 64)
