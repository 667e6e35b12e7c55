"""Policy: warnings with reasons; at the configured count the agent is dismissed."""

from __future__ import annotations

import pytest

from parley.settings import Settings
from tests.agents.support import give_work
from tests.support import Harness, ManualClock, items, started


async def test_a_warning_is_recorded_with_its_reason(parley: Harness) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post(
        "/api/v1/agents/scribe/warnings", json={"reason": "merged without review"}
    )
    assert response.status_code == 200
    outcome = response.json()
    assert (outcome["warnings"], outcome["dismissed"], outcome["agent"]["lifecycle"]) == (
        1,
        False,
        "active",
    )
    warnings = items((await parley.owner.get("/api/v1/agents/scribe/warnings")).json())
    assert [(w["reason"], w["given_by"]) for w in warnings] == [("merged without review", "owner")]


async def test_the_second_warning_dismisses_by_default(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.owner.post("/api/v1/agents/scribe/warnings", json={"reason": "first"})
    outcome = (
        await parley.owner.post("/api/v1/agents/scribe/warnings", json={"reason": "again"})
    ).json()
    assert outcome["dismissed"] is True
    agent = await parley.agent("scribe")
    assert agent["lifecycle"] == "retired"
    assert agent["retired_reason"] == "dismissed after 2 warnings; last: again"
    assert agent["warnings"] == 2


async def test_dismissal_stops_running_work(parley: Harness) -> None:
    await parley.hire("scribe")
    await give_work(parley, "scribe")
    for reason in ("one", "two"):
        await parley.owner.post("/api/v1/agents/scribe/warnings", json={"reason": reason})
    async with parley.context.store.transaction() as tx:
        agent = await tx.agents.by_name("scribe")
        assert agent is not None
        assert await tx.runs.count_open(agent.id) == 0


async def test_the_dismissal_count_is_configurable(settings: Settings, clock: ManualClock) -> None:
    async with started(settings.model_copy(update={"warnings_to_dismiss": 3}), clock) as parley:
        await parley.hire("scribe")
        for reason in ("one", "two"):
            await parley.owner.post("/api/v1/agents/scribe/warnings", json={"reason": reason})
        assert (await parley.agent("scribe"))["lifecycle"] == "active"
        await parley.owner.post("/api/v1/agents/scribe/warnings", json={"reason": "three"})
        assert (await parley.agent("scribe"))["lifecycle"] == "retired"


async def test_a_retired_agent_cannot_be_warned(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    response = await parley.owner.post("/api/v1/agents/scribe/warnings", json={"reason": "late"})
    assert response.status_code == 409
    assert (await parley.agent("scribe"))["warnings"] == 0


@pytest.mark.parametrize("reason", ["", "   ", "x" * 2001])
async def test_a_warning_needs_a_reason(parley: Harness, reason: str) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/warnings", json={"reason": reason})
    assert response.status_code == 400
    assert (await parley.agent("scribe"))["warnings"] == 0


async def test_warning_an_unknown_agent_is_404(parley: Harness) -> None:
    response = await parley.owner.post("/api/v1/agents/ghost/warnings", json={"reason": "x"})
    assert response.status_code == 404
