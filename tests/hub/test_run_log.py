"""The operator's log of runs: one INFO line per start, finish, failure and stop, with agent,
node, topic, state, duration and reason, written after commit (a rollback logs nothing)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import httpx
import pytest

from parley.node.messages import ActionCall, RunEvent
from parley.runs.stop import stop_runs
from parley.settings import Settings
from parley.tokens import hash_token
from tests.runs.support import (
    end_as_node,
    follow,
    get,
    holding_brain,
    say,
    script,
    token_of,
)
from tests.support import Harness, ManualClock, eventually, started

LOGGER = "parley.hub.run_log"
SLOW = "otherwise: [{sleep: 60}]"


def lines_of(caplog: pytest.LogCaptureFixture, run_id: int) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == LOGGER and record.getMessage().startswith(f"run {run_id} ")
    ]


def fields(line: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', line))


async def _running(parley: Harness, run_id: int, client: httpx.AsyncClient | None = None) -> bool:
    shown = await get(client or parley.owner, f"/runs/{run_id}")
    return bool(shown["run"]["state"] == "running")


@pytest.fixture(autouse=True)
def _info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="parley")


async def test_a_start_and_a_finish_are_logged_once_each_with_their_fields(
    parley: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    await parley.add_person("ada")
    await parley.hire("ada-desk", human="ada")  # its turn runs until its person answers
    queued = await say(parley.owner, "ada-desk", "can you sign this?")
    run_id = queued["run_id"]
    assert await eventually(lambda: _running(parley, run_id))
    parley.clock.advance(seconds=2.5)
    ada = parley.client((await parley.owner.post("/api/v1/people/ada/token")).json()["token"])
    answered = await ada.post(f"/api/v1/runs/{run_id}/answer", json={"text": "signed"})
    assert answered.status_code == 200, answered.text

    started_line, finished_line = lines_of(caplog, run_id)
    topic = f"conversation:{queued['topic_id']}"
    assert started_line.startswith(f"run {run_id} started ")
    assert fields(started_line) == {
        "agent": "ada-desk",
        "node": "local",
        "topic": topic,
        "state": "running",
        "waited": "0.000s",
    }
    assert finished_line.startswith(f"run {run_id} finished ")
    assert fields(finished_line) == {
        "agent": "ada-desk",
        "node": "local",
        "topic": topic,
        "state": "finished",
        "duration": "2.500s",
    }


async def test_a_failure_is_logged_with_its_reason(
    parley: Harness, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    rules = "otherwise: [{send: {to: nobody, text: hi}}]"
    await parley.hire("lost", brain=script(tmp_path, "lost", rules))
    queued = await say(parley.owner, "lost", "go")
    _, end = await follow(parley.owner, queued["run_id"])
    assert end["state"] == "failed"
    [started_line, failed_line] = lines_of(caplog, queued["run_id"])
    assert "state=running" in started_line
    found = fields(failed_line)
    assert failed_line.startswith(f"run {queued['run_id']} failed ")
    assert (found["agent"], found["state"]) == ("lost", "failed")
    assert found["reason"] == json.dumps(end["reason"]) and "nobody" in end["reason"]


async def test_a_stop_is_logged_once_and_a_rolled_back_stop_not_at_all(
    parley: Harness, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    await parley.hire("slow", brain=script(tmp_path, "slow", SLOW))
    queued = await say(parley.owner, "slow", "take your time")
    run_id = queued["run_id"]
    assert await eventually(lambda: _running(parley, run_id))

    store = parley.context.store
    with pytest.raises(RuntimeError):
        async with store.transaction() as tx:
            run = await tx.runs.by_id(run_id)
            assert run is not None
            assert await stop_runs(tx, [run], parley.clock.now(), "rolled back")
            raise RuntimeError("the stop is taken back")
    assert await _running(parley, run_id)
    assert len(lines_of(caplog, run_id)) == 1  # its start only

    parley.clock.advance(seconds=1)
    stopped = await parley.owner.post(f"/api/v1/runs/{run_id}/stop")
    assert stopped.status_code == 200, stopped.text
    await parley.owner.post(f"/api/v1/runs/{run_id}/stop")  # twice: no second line
    [_, stop_line] = lines_of(caplog, run_id)
    found = fields(stop_line)
    assert stop_line.startswith(f"run {run_id} stopped ")
    assert (found["state"], found["duration"]) == ("stopped", "1.000s")
    assert found["reason"] == '"stopped by owner"'


async def test_a_batch_rolled_back_for_a_refused_action_logs_each_outcome_once(
    parley: Harness, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """The recorder rolls a batch back when one turn's actions are refused and records it
    again: the outcomes of the first try were never committed and are not logged."""
    hired = await parley.hire("slow", brain=holding_brain(tmp_path), max_sessions=2)
    first = (await say(parley.owner, "slow", "one"))["run_id"]
    ada = parley.client(await parley.add_person("ada"))
    second = (await say(ada, "slow", "two"))["run_id"]
    tokens = [await token_of(hired["workspace"], run_id) for run_id in (first, second)]
    proofs = [{"run_token": token, "started_as": hash_token(token)} for token in tokens]
    # As a node would report them, back to back: they are recorded in one batch. The second
    # sends to an agent there is none of, which is refused.
    fine = RunEvent(run_id=first, kind="finished", text="done", **proofs[0])
    refused = RunEvent(
        run_id=second,
        kind="finished",
        text="done too",
        actions=[ActionCall(name="send", arguments={"to": "ghost", "text": "hi"})],
        **proofs[1],
    )
    for event in (fine, refused):
        await end_as_node(parley, event)
    _, end = await follow(ada, second)
    assert end["state"] == "failed"
    await follow(parley.owner, first)
    assert [line.split()[2] for line in lines_of(caplog, first)] == ["started", "finished"]
    assert [line.split()[2] for line in lines_of(caplog, second)] == ["started", "failed"]


async def test_a_run_interrupted_by_a_restart_is_logged_as_failed_at_the_next_start(
    settings: Settings, clock: ManualClock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    brain = script(tmp_path, "slow", SLOW)
    async with started(settings, clock) as parley:
        await parley.hire("slow", brain=brain)
        run_id = (await say(parley.owner, "slow", "first"))["run_id"]
        assert await eventually(lambda: _running(parley, run_id))
    caplog.clear()
    clock.advance(seconds=3)
    async with started(settings, clock):
        [line] = [line for line in lines_of(caplog, run_id) if " failed " in line]
    found = fields(line)
    assert (found["agent"], found["state"], found["reason"]) == ("slow", "failed", '"interrupted"')
    assert found["duration"] == "3.000s"
