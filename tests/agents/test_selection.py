"""Every query that picks an agent for work filters on the lifecycle."""

from __future__ import annotations

import pytest

from parley.agents.selection import pick_for_held_topic, pick_for_new_topic
from parley.errors import Conflict, NotFound
from tests.agents.support import give_work
from tests.support import Harness


async def _pick_new(parley: Harness, name: str) -> str:
    async with parley.context.store.transaction() as tx:
        return (await pick_for_new_topic(tx, parley.clock, name)).name


async def _pick_held(parley: Harness, name: str) -> str:
    async with parley.context.store.transaction() as tx:
        return (await pick_for_held_topic(tx, name)).name


async def test_an_active_agent_is_picked(parley: Harness) -> None:
    await parley.hire("scribe")
    assert await _pick_new(parley, "scribe") == "scribe"
    assert await _pick_held(parley, "scribe") == "scribe"


async def test_a_draining_agent_is_never_picked_for_a_new_topic(parley: Harness) -> None:
    await parley.hire("scribe")
    await give_work(parley, "scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={"reason": "leaving"})
    with pytest.raises(
        Conflict, match=r"agent scribe is draining \(leaving\) and takes no new work"
    ):
        await _pick_new(parley, "scribe")
    # ... but text in a topic it already holds still reaches it, so its work can finish.
    assert await _pick_held(parley, "scribe") == "scribe"


async def test_a_retired_agent_is_never_picked(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    with pytest.raises(Conflict, match="agent scribe is retired"):
        await _pick_new(parley, "scribe")
    with pytest.raises(Conflict, match="agent scribe is retired"):
        await _pick_held(parley, "scribe")


async def test_an_unknown_agent_is_not_found(parley: Harness) -> None:
    with pytest.raises(NotFound, match="no agent named 'ghost'"):
        await _pick_new(parley, "ghost")


async def test_a_node_session_always_receives(parley: Harness) -> None:
    assert await _pick_new(parley, "node:local") == "node:local"


async def test_a_template_never_runs_its_work_goes_to_its_least_loaded_clone(
    parley: Harness,
) -> None:
    await parley.hire("helper", template=True, clone_lifetime="1h", surge_threshold=5)
    first = (await parley.owner.post("/api/v1/agents/helper/clones", json={})).json()["name"]
    second = (await parley.owner.post("/api/v1/agents/helper/clones", json={})).json()["name"]
    await give_work(parley, first)
    assert await _pick_new(parley, "helper") == second  # the least loaded clone
    await parley.owner.post(f"/api/v1/agents/{second}/retire", json={})
    assert await _pick_new(parley, "helper") == first  # never the retired one
    with pytest.raises(Conflict):
        await _pick_held(parley, "helper")  # the template itself holds nothing


async def test_work_for_a_template_without_clones_hires_one(parley: Harness) -> None:
    await parley.hire("helper", template=True, clone_lifetime="1h")
    assert await _pick_new(parley, "helper") == "helper-1"
    clone = await parley.agent("helper-1")
    assert clone["clone_of"] == "helper"
