"""Templates are cloned into real agents with a lifetime; expired clones drain and retire."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import cast

import pytest

from parley.agents.sweeper import AgentSweeper, sweep_once
from parley.settings import Settings
from parley.store import Store, Tx
from tests.agents.support import finish_work, give_work
from tests.support import Harness, ManualClock, eventually, lifecycle_is, started


async def _template(parley: Harness) -> None:
    await parley.hire(
        "researcher",
        template=True,
        engram="digs deep",
        brain="openai:small",
        allow_missing_key=True,  # tests have no API key
        max_sessions=2,
        surge_threshold=4,
        clone_lifetime="2h",
    )


async def test_a_template_shows_its_surge_settings(parley: Harness) -> None:
    await _template(parley)
    template = await parley.agent("researcher")
    assert (template["template"], template["surge_threshold"], template["clone_lifetime"]) == (
        True,
        4,
        "2h",
    )


async def test_a_clone_inherits_the_template_and_carries_a_lifetime(parley: Harness) -> None:
    await _template(parley)
    response = await parley.owner.post("/api/v1/agents/researcher/clones", json={})
    assert response.status_code == 201
    clone = response.json()
    assert clone["name"] == "researcher-1"
    assert clone["clone_of"] == "researcher"
    assert clone["template"] is False
    assert (clone["engram"], clone["brain"], clone["node"], clone["max_sessions"]) == (
        "digs deep",
        "openai:small",
        "local",
        2,
    )
    assert clone["lifecycle"] == "active"
    expires = datetime.fromisoformat(clone["expires_at"])
    assert (expires - parley.clock.now()).total_seconds() == 7200


async def test_clone_names_count_up_and_can_be_chosen(parley: Harness) -> None:
    await _template(parley)
    await parley.owner.post("/api/v1/agents/researcher/clones", json={})
    named = await parley.owner.post(
        "/api/v1/agents/researcher/clones", json={"name": "deep-digger", "lifetime": "30m"}
    )
    third = await parley.owner.post("/api/v1/agents/researcher/clones", json={})
    assert named.json()["name"] == "deep-digger"
    assert third.json()["name"] == "researcher-3"


async def test_only_templates_can_be_cloned(parley: Harness) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/clones", json={"lifetime": "1h"})
    assert response.status_code == 409
    assert "not a template" in response.json()["message"]


async def test_a_clone_needs_a_lifetime(parley: Harness) -> None:
    await parley.hire("plain", template=True)
    response = await parley.owner.post("/api/v1/agents/plain/clones", json={})
    assert response.status_code == 400
    assert "has no clone lifetime" in response.json()["message"]
    assert (
        await parley.owner.post("/api/v1/agents/plain/clones", json={"lifetime": "1h"})
    ).status_code == 201


async def test_an_expired_clone_is_drained_and_retired_by_the_sweeper(parley: Harness) -> None:
    await _template(parley)
    await parley.owner.post("/api/v1/agents/researcher/clones", json={})
    busy = (await parley.owner.post("/api/v1/agents/researcher/clones", json={})).json()["name"]
    run = await give_work(parley, busy)
    parley.clock.advance(hours=1)
    report = await sweep_once(parley.context.store, parley.clock)
    assert (report.draining, report.retired) == ([], [])
    parley.clock.advance(hours=1, seconds=1)
    report = await sweep_once(parley.context.store, parley.clock)
    assert sorted(report.draining) == ["researcher-1", "researcher-2"]
    assert report.retired == ["researcher-1"]
    assert (await parley.agent("researcher-2"))["lifecycle"] == "draining"
    await finish_work(parley, run)
    report = await sweep_once(parley.context.store, parley.clock)
    assert report.retired == ["researcher-2"]
    clone = await parley.agent("researcher-2")
    assert (clone["lifecycle"], clone["retired_reason"]) == ("retired", "clone lifetime ended")
    assert (await parley.agent("researcher"))["lifecycle"] == "active"  # the template stays


async def test_a_retired_template_makes_no_clones(parley: Harness) -> None:
    await _template(parley)
    await parley.owner.post("/api/v1/agents/researcher/retire", json={})
    response = await parley.owner.post("/api/v1/agents/researcher/clones", json={})
    assert response.status_code == 409
    assert "template researcher is retired" in response.json()["message"]


async def test_the_background_sweeper_retires_expired_clones_by_itself(
    settings: Settings, clock: ManualClock
) -> None:
    async with started(settings.model_copy(update={"sweep_seconds": 0.01}), clock) as parley:
        await _template(parley)
        await parley.owner.post("/api/v1/agents/researcher/clones", json={})
        parley.clock.advance(hours=3)
        assert await eventually(lambda: lifecycle_is(parley, "researcher-1", "retired"))


class _FailsOnce:
    """The real store's transactions, the first one raising as a bug would."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.failed = False

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        if not self.failed:
            self.failed = True
            raise RuntimeError("a sweep gone wrong (test)")
        async with self._store.transaction() as tx:
            yield tx


async def test_the_sweeper_goes_on_after_a_sweep_that_raised(
    parley: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    await _template(parley)
    await parley.owner.post("/api/v1/agents/researcher/clones", json={})
    parley.clock.advance(hours=3)
    store = _FailsOnce(parley.context.store)
    sweeper = AgentSweeper(cast(Store, store), parley.clock, 0.01)
    await sweeper.start()
    try:
        assert await eventually(lambda: lifecycle_is(parley, "researcher-1", "retired"))
    finally:
        await sweeper.stop()
    assert store.failed and sweeper.passes >= 2
    assert "the agents' sweep: a pass failed (a sweep gone wrong (test))" in caplog.text
