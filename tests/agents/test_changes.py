"""``PATCH /agents/{name}`` for an agent's engram, brain and max sessions, and its history of
changes: who changed what and when; refusals change nothing."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.brains.keys import key_notices
from parley.brains.spec import parse_brain_spec
from parley.errors import Invalid
from parley.settings import Settings
from tests.runs.support import script
from tests.support import Harness, items, oldest_first


async def _patch(client: httpx.AsyncClient, name: str, **body: Any) -> httpx.Response:
    return await client.patch(f"/api/v1/agents/{name}", json=body)


async def _changes(parley: Harness, name: str) -> list[Any]:
    response = await parley.owner.get(f"/api/v1/agents/{name}/changes")
    assert response.status_code == 200, response.text
    return items(response.json())


async def test_the_history_records_who_changed_what_and_when(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("scribe", engram="terse")
    other = parley.client(await parley.add_person("bea", "owner"))
    async with other:
        first = await _patch(other, "scribe", max_sessions=4)
    assert first.status_code == 200, first.text
    parley.clock.advance(minutes=5)
    brain = script(tmp_path, "rules", "otherwise:\n  - reply: hi\n")
    second = await _patch(parley.owner, "scribe", brain=brain, engram="patient")
    assert second.status_code == 200, second.text
    response = await parley.owner.get("/api/v1/agents/scribe/changes", params={"limit": 10})
    history = oldest_first(response.json())
    assert [(c["setting"], c["old"], c["new"], c["changed_by"]) for c in history] == [
        ("max_sessions", "1", "4", "bea"),
        ("engram", "terse", "patient", "owner"),
        ("brain", "offline", brain, "owner"),
    ]
    stamps = [c["changed_at"] for c in history]
    assert stamps[1] == stamps[2] != stamps[0]
    agent = await parley.agent("scribe")
    assert (agent["max_sessions"], agent["engram"], agent["brain"]) == (4, "patient", brain)


async def test_setting_a_value_it_already_has_records_nothing(parley: Harness) -> None:
    await parley.hire("scribe", max_sessions=2)
    assert (await _patch(parley.owner, "scribe", max_sessions=2)).status_code == 200
    assert await _changes(parley, "scribe") == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"max_sessions": 0}, "max sessions must be between 1 and 1000, not 0"),
        ({"max_sessions": 1001}, "max sessions must be between 1 and 1000, not 1001"),
        ({"engram": "x" * 20_001}, "at most 20000 characters"),
        ({"brain": "psychic:x"}, "is not a brain spec"),
        ({"brain": "scripted:relative.yaml"}, "must be an absolute path"),
        ({"brain": "scripted:/no/such/rules.yaml"}, "scripted brain file /no/such/rules.yaml"),
        ({"brain": "command:'unclosed"}, "is not a command line"),
        ({"brain": "openai:gpt-4o"}, "set PARLEY_OPENAI_API_KEY"),
    ],
)
async def test_bad_values_are_refused_as_at_hire_and_change_nothing(
    parley: Harness, body: dict[str, Any], message: str
) -> None:
    await parley.hire("scribe", engram="kept")
    # A good change beside the bad one: all or nothing.
    refused = await _patch(parley.owner, "scribe", **{"engram": "new", **body})
    assert refused.status_code == 400, refused.text
    assert message in refused.json()["message"]
    agent = await parley.agent("scribe")
    assert (agent["engram"], agent["brain"], agent["max_sessions"]) == ("kept", "offline", 1)
    assert await _changes(parley, "scribe") == []


async def test_a_value_of_the_wrong_type_is_refused_naming_the_field(parley: Harness) -> None:
    await parley.hire("scribe")
    refused = await _patch(parley.owner, "scribe", max_sessions="many")
    assert refused.status_code == 400  # Parley answers every bad request 400, with a message
    assert "max_sessions" in refused.json()["message"]


async def test_non_owners_unknown_agents_humans_and_retired_ones_are_refused(
    parley: Harness,
) -> None:
    await parley.hire("scribe")
    member = parley.client(await parley.add_person("ada"))
    async with member:
        assert (await _patch(member, "scribe", max_sessions=2)).status_code == 403
        assert (await member.get("/api/v1/agents/scribe/changes")).status_code == 200
    assert (await _patch(parley.owner, "nobody", max_sessions=2)).status_code == 404
    assert (await parley.owner.get("/api/v1/agents/nobody/changes")).status_code == 404
    await parley.hire("ada-desk", human="ada")
    human = await _patch(parley.owner, "ada-desk", brain="offline")
    assert human.status_code == 400 and "it has no brain" in human.json()["message"]
    await parley.owner.post("/api/v1/agents/scribe/retire", json={"force": True})
    assert (await _patch(parley.owner, "scribe", max_sessions=2)).status_code == 409


async def test_a_node_session_takes_a_brain_and_refuses_the_rest(
    parley: Harness, tmp_path: Path
) -> None:
    brain = script(tmp_path, "node", "otherwise:\n  - reply: hi\n")
    changed = await _patch(parley.owner, "node:local", brain=brain)
    assert changed.status_code == 200, changed.text
    assert (await parley.agent("node:local"))["brain"] == brain
    for body in ({"engram": "calm"}, {"max_sessions": 2}):
        assert (await _patch(parley.owner, "node:local", **body)).status_code == 400


async def test_a_missing_key_is_accepted_when_allowed_with_a_notice(parley: Harness) -> None:
    await parley.hire("gpt")
    allowed = await _patch(parley.owner, "gpt", brain="openai:gpt-4o", allow_missing_key=True)
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["notices"] == [
        "warning: no API key for brain openai:gpt-4o (PARLEY_OPENAI_API_KEY): its turns fail"
        " until one is set"
    ]
    assert (await _patch(parley.owner, "gpt", max_sessions=2)).json()["notices"] == []


def test_a_key_is_needed_only_at_the_providers_own_api() -> None:
    openai, anthropic = parse_brain_spec("openai:m"), parse_brain_spec("anthropic:m")
    keyed = Settings(openai_api_key="sk-x", anthropic_api_key="sk-y")
    assert key_notices(openai, keyed, False) == key_notices(anthropic, keyed, False) == []
    local = Settings(
        openai_base_url="http://127.0.0.1:11434/v1", anthropic_base_url="http://proxy.local"
    )
    assert key_notices(openai, local, False) == key_notices(anthropic, local, False) == []
    empty = Settings(openai_api_key="")
    with pytest.raises(Invalid, match="PARLEY_OPENAI_API_KEY"):
        key_notices(openai, empty, False)


_EXAMPLES = itertools.count()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(
        st.one_of(
            st.builds(lambda n: {"max_sessions": n}, st.integers(1, 5)),
            st.builds(lambda e: {"engram": e}, st.sampled_from(["", "a", "b"])),
            st.builds(
                lambda n, e: {"max_sessions": n, "engram": e}, st.integers(1, 5), st.just("c")
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
async def test_the_history_replays_to_the_agent_as_it_is(
    parley: Harness, steps: list[dict[str, Any]]
) -> None:
    """Whatever changes are made, each setting's history chains (each old value is the previous
    new one) and ends at the agent's current value; a change to the same value is not recorded."""
    # The fixture outlives an example: each example changes an agent of its own.
    name = f"scribe-{next(_EXAMPLES)}"
    start = await parley.hire(name)
    for step in steps:
        assert (await _patch(parley.owner, name, **step)).status_code == 200
    response = await parley.owner.get(f"/api/v1/agents/{name}/changes", params={"limit": 100})
    history = oldest_first(response.json())
    agent = await parley.agent(name)
    for setting in ("max_sessions", "engram"):
        value = str(start[setting])
        for change in (c for c in history if c["setting"] == setting):
            assert change["old"] == value != change["new"]
            value = change["new"]
        assert value == str(agent[setting])
