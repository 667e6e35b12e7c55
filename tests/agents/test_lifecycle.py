"""hired → active → draining → retired, one function per transition, refusals naming the state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from parley.agents import lifecycle
from parley.agents.model import Lifecycle
from parley.agents.sweeper import sweep_once
from parley.agents.workspaces import provision
from parley.errors import Conflict
from parley.node.runner import NodeRunner
from tests.agents.support import finish_work, give_work
from tests.support import Harness, items


async def test_retire_of_an_idle_agent_retires_it_at_once(parley: Harness) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post(
        "/api/v1/agents/scribe/retire", json={"reason": "project over"}
    )
    assert response.status_code == 200
    agent = response.json()
    assert agent["lifecycle"] == "retired"
    assert agent["retired_reason"] == "project over"
    assert agent["retired_at"] is not None


async def test_retire_of_a_busy_agent_drains_until_its_work_ends(parley: Harness) -> None:
    await parley.hire("scribe")
    run = await give_work(parley, "scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    assert response.json()["lifecycle"] == "draining"
    assert (await sweep_once(parley.context.store, parley.clock)).retired == []
    assert (await parley.agent("scribe"))["lifecycle"] == "draining"
    await finish_work(parley, run)
    assert (await sweep_once(parley.context.store, parley.clock)).retired == ["scribe"]
    agent = await parley.agent("scribe")
    assert agent["lifecycle"] == "retired"
    assert agent["retired_reason"] == "retired by owner"


async def test_force_retire_stops_running_work_now(parley: Harness) -> None:
    await parley.hire("scribe")
    await give_work(parley, "scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/retire", json={"force": True})
    assert response.json()["lifecycle"] == "retired"
    async with parley.context.store.transaction() as tx:
        agent = await tx.agents.by_name("scribe")
        assert agent is not None
        assert await tx.runs.count_open(agent.id) == 0


async def test_force_retire_finishes_a_draining_agent(parley: Harness) -> None:
    await parley.hire("scribe")
    await give_work(parley, "scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    response = await parley.owner.post("/api/v1/agents/scribe/retire", json={"force": True})
    assert response.json()["lifecycle"] == "retired"


async def test_retiring_a_retired_agent_is_a_conflict_naming_its_state(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    for body in ({}, {"force": True}):
        response = await parley.owner.post("/api/v1/agents/scribe/retire", json=body)
        assert response.status_code == 409
        assert response.json()["message"].startswith("agent scribe is retired;")
        assert response.json()["state"] == "retired"


async def test_retired_agents_stay_readable(parley: Harness) -> None:
    await parley.hire("scribe", engram="keeps notes")
    await parley.owner.post("/api/v1/agents/scribe/memory", json={"note": "likes lists"})
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    agent = await parley.agent("scribe")
    assert (agent["lifecycle"], agent["engram"]) == ("retired", "keeps notes")
    memory = items((await parley.owner.get("/api/v1/agents/scribe/memory")).json())
    assert [note["note"] for note in memory] == ["likes lists"]
    retired = {"lifecycle": "retired"}
    listed = items((await parley.owner.get("/api/v1/agents", params=retired)).json())
    assert [a["name"] for a in listed] == ["scribe"]


async def test_agents_are_never_deleted(parley: Harness) -> None:
    await parley.hire("scribe")
    response = await parley.owner.delete("/api/v1/agents/scribe")
    assert response.status_code == 409
    assert "never deleted" in response.json()["message"]
    assert (await parley.agent("scribe"))["lifecycle"] == "active"


@pytest.mark.parametrize(
    ("start", "transition", "refusal"),
    [
        ("active", "activate", "agent scribe is active; only a hired agent can be activated"),
        ("retired", "activate", "agent scribe is retired; only a hired agent can be activated"),
        (
            "retired",
            "begin_draining",
            "agent scribe is retired; only a hired or active agent can be drained",
        ),
        ("active", "retire", "agent scribe is active; only a draining agent can be retired"),
        ("retired", "force_retire", "agent scribe is retired; only a hired or active or draining"),
    ],
)
async def test_illegal_transitions_fail_with_conflict_naming_the_state(
    parley: Harness, start: str, transition: str, refusal: str
) -> None:
    await parley.hire("scribe")
    if start == "retired":
        await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    store, clock = parley.context.store, parley.clock
    with pytest.raises(Conflict) as caught:
        async with store.transaction() as tx:
            agent = await tx.agents.by_name("scribe")
            assert agent is not None
            if transition == "activate":
                await lifecycle.activate(tx, agent)
            elif transition == "begin_draining":
                await lifecycle.begin_draining(tx, agent, "why")
            elif transition == "retire":
                await lifecycle.retire(tx, clock, agent)
            else:
                await lifecycle.force_retire(tx, clock, agent, "why")
    assert caught.value.message.startswith(refusal)
    assert caught.value.fields["state"] == start
    assert (await parley.agent("scribe"))["lifecycle"] == start


async def test_a_stale_read_cannot_resurrect_a_retired_agent(parley: Harness) -> None:
    """The transition checks the state in the store, not the copy the caller holds."""
    await parley.hire("scribe")
    async with parley.context.store.transaction() as tx:
        stale = await tx.agents.by_name("scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    assert stale is not None and stale.lifecycle.value == "active"
    with pytest.raises(Conflict, match="agent scribe is retired"):
        async with parley.context.store.transaction() as tx:
            await lifecycle.begin_draining(tx, stale, "again")


async def test_reassign_moves_an_idle_agent_and_makes_its_workspace_there(
    parley: Harness, beta: NodeRunner, tmp_path: Path
) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/reassign", json={"node": "beta"})
    assert response.status_code == 200
    agent = response.json()
    assert (agent["node"], agent["lifecycle"]) == ("beta", "active")
    assert Path(agent["workspace"]) == (tmp_path / "beta" / "scribe").resolve()
    assert Path(agent["workspace"]).is_dir()


async def test_reassign_is_refused_unless_the_agent_is_idle(
    parley: Harness, beta: NodeRunner
) -> None:
    await parley.hire("scribe")
    await give_work(parley, "scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/reassign", json={"node": "beta"})
    assert response.status_code == 409
    assert response.json()["message"] == (
        "agent scribe is not idle (1 turn(s) running); reassign it when it is idle"
    )
    assert (await parley.agent("scribe"))["node"] == "local"


@pytest.mark.parametrize(
    ("node", "status", "says"),
    [("local", 409, "already on node local"), ("nowhere", 404, "no node named 'nowhere'")],
)
async def test_reassign_to_the_same_or_an_unknown_node_is_refused(
    parley: Harness, node: str, status: int, says: str
) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/reassign", json={"node": node})
    assert response.status_code == status
    assert says in response.json()["message"]


async def test_a_retired_agent_cannot_be_reassigned(parley: Harness, beta: NodeRunner) -> None:
    await parley.hire("scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    response = await parley.owner.post("/api/v1/agents/scribe/reassign", json={"node": "beta"})
    assert response.status_code == 409
    assert "agent scribe is retired" in response.json()["message"]


async def test_provisionings_of_one_hired_agent_side_by_side_activate_it_once_and_refuse_none(
    parley: Harness,
) -> None:
    """A hire provisions the workspace itself and the runtime does too, on its commit: both may
    read the agent hired (PostgreSQL's transactions run side by side) and the second's move to
    active finds it moved. That is done, not a conflict: a hire answered 409 had succeeded."""
    await parley.hire("scribe")
    store, broker = parley.context.store, parley.context.broker
    async with store.transaction() as tx:
        agent = await tx.agents.by_name("scribe")
        assert agent is not None
        assert await tx.agents.move_lifecycle(agent.id, [Lifecycle.ACTIVE], Lifecycle.HIRED)
        hired = await tx.agents.by_name("scribe")
    assert hired is not None
    outcomes = await asyncio.gather(*(provision(store, broker, hired) for _ in range(8)))
    assert outcomes == [True] * 8
    assert (await parley.agent("scribe"))["lifecycle"] == "active"
