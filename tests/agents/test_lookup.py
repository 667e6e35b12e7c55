"""An unknown agent's name is answered with the names the person may have meant: the same
name in another case first, else the close ones; never a retired agent, which no one may
address again."""

from __future__ import annotations

import pytest

from parley.agents.lookup import agent_by_name
from parley.errors import NotFound
from tests.cli.test_runtime_commands import ok, run
from tests.served import Served
from tests.support import Harness


async def _missing(parley: Harness, name: str) -> str:
    async with parley.context.store.transaction() as tx:
        with pytest.raises(NotFound) as refused:
            await agent_by_name(tx, name)
    return refused.value.message


async def test_another_case_of_a_name_suggests_the_name(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.hire("scribbler")
    assert await _missing(parley, "Scribe") == "no agent named 'Scribe'; did you mean 'scribe'?"


async def test_a_misspelt_name_suggests_the_close_ones(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.hire("scribes")
    await parley.hire("brewer")
    said = await _missing(parley, "scrbe")
    assert said == "no agent named 'scrbe'; did you mean 'scribe' or 'scribes'?"


async def test_nothing_close_suggests_nothing_and_a_retired_agent_is_never_suggested(
    parley: Harness,
) -> None:
    await parley.hire("scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    assert await _missing(parley, "Scribe") == "no agent named 'Scribe'"
    assert await _missing(parley, "ghost") == "no agent named 'ghost'"


def test_say_to_an_agent_in_capitals_suggests_its_name(served: Served) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local")
    said = run(served, "say", "Scribe", "hello")
    assert said.exit_code == 3
    assert said.stderr == "error: no agent named 'Scribe'; did you mean 'scribe'?\n"
