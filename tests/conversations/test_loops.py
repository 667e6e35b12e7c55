"""Runaway loops: a root's hop budget cuts off agents that answer each other for
ever and tells the person once; a stop of a conversation or a task reaches every agent's work
under it, at any depth, and nothing runs again afterwards."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from parley.settings import Settings
from tests.runs.support import follow, get, get_all, say, script
from tests.support import Harness, ManualClock, eventually, items, started

PING = """
    rules:
      - when: {from: pong}
        do: [{reply: "{text}"}]
    otherwise:
      - send: {to: pong, text: "ball"}
"""
PONG = "otherwise: [{reply: '{text}'}]"


@asynccontextmanager
async def _parley(settings: Settings, clock: ManualClock, budget: int) -> AsyncIterator[Harness]:
    async with started(settings.model_copy(update={"hop_budget": budget}), clock) as harness:
        yield harness


async def _hire_ping_pong(parley: Harness, tmp_path: Path, ping: str = "ping") -> None:
    await parley.hire(ping, brain=script(tmp_path, ping, PING.replace("pong", f"{ping}-pong")))
    await parley.hire(f"{ping}-pong", brain=script(tmp_path, f"{ping}-pong", PONG))


async def _runs(parley: Harness) -> list[dict[str, Any]]:
    return await get_all(parley.owner, "/runs")


async def _settled(parley: Harness) -> bool:
    return all(run["state"] not in ("queued", "running") for run in await _runs(parley))


async def _notices(parley: Harness, path: str) -> list[str]:
    """The budget's notices (a failed turn posts a notice of its own)."""
    shown = await get(parley.owner, path)
    return [
        m["body"]
        for m in items(shown["messages"])
        if m["kind"] == "notice" and "stopped from going on" in m["body"]
    ]


async def test_two_agents_answering_each_other_for_ever_are_cut_off_at_the_hop_budget(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    async with _parley(settings, clock, budget=10) as parley:
        await _hire_ping_pong(parley, tmp_path)
        await say(parley.owner, "ping", "serve")
        assert await eventually(lambda: _last_run_failed(parley))
        assert await _settled(parley)
        runs = await _runs(parley)
        # The person's turn and ten hops, each starting a run; the eleventh hop was refused.
        assert len(runs) == 11
        failed = runs[0]
        assert failed["state"] == "failed"
        assert "hop budget" in failed["reason"] and "hop_budget" in failed["reason"]
        [notice] = await _notices(parley, "/conversations/ping")
        assert "stopped from going on" in notice
        assert "10 sends, subtasks and node questions in 1h" in notice

        # Spent for the window: the next serve is refused at once, and told no second time.
        again = await say(parley.owner, "ping", "serve again")
        _, end = await follow(parley.owner, again["run_id"])
        assert end["state"] == "failed" and "hop budget" in end["reason"]
        assert len(await _notices(parley, "/conversations/ping")) == 1
        assert len(await _runs(parley)) == 12

        # Once the window has passed, the agents may go on (and be cut off again).
        clock.advance(seconds=3600)
        await say(parley.owner, "ping", "a new hour")
        assert await eventually(lambda: _run_count(parley, 12 + 11))
        assert await eventually(lambda: _settled(parley))
        assert len(await _notices(parley, "/conversations/ping")) == 2


async def _last_run_failed(parley: Harness) -> bool:
    runs = await _runs(parley)
    return bool(runs) and runs[0]["state"] == "failed"


async def _run_count(parley: Harness, count: int) -> bool:
    return len(await _runs(parley)) >= count


async def test_subtasks_spend_the_budget_of_the_root_that_set_them_off(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    # Each subtask is a root of its own; a loop through them still counts for the person's
    # conversation that started it.
    spawner = """
        otherwise:
          - spawn: {agent: finisher, text: "once more"}
    """
    async with _parley(settings, clock, budget=4) as parley:
        await parley.hire("spawner", brain=script(tmp_path, "spawner", spawner))
        await parley.hire(
            "finisher", brain=script(tmp_path, "finisher", "otherwise: [complete: ok]")
        )
        await say(parley.owner, "spawner", "go")
        assert await eventually(lambda: _notice_given(parley, "/conversations/spawner"))
        assert await eventually(lambda: _settled(parley))
        tasks = items(await get(parley.owner, "/tasks"))
        assert len(tasks) == 4
        runs = await _runs(parley)
        assert [r["state"] for r in runs].count("failed") == 1
        assert "hop budget" in runs[0]["reason"]


async def _notice_given(parley: Harness, path: str) -> bool:
    return bool(await _notices(parley, path))


HOLDER = (
    "import os, pathlib, time\n"
    "pathlib.Path('token').write_text(os.environ['PARLEY_RUN_TOKEN'])\n"
    "time.sleep(60)\n"
)


async def test_a_run_acting_over_http_is_refused_past_the_budget_with_the_reason(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    program = tmp_path / "holder.py"
    program.write_text(HOLDER)
    async with _parley(settings, clock, budget=3) as parley:
        await parley.hire("helper", brain=script(tmp_path, "helper", "otherwise: [{sleep: 30}]"))
        hired = await parley.hire("boss", brain=f"command:{sys.executable} {program}")
        task = (
            await parley.owner.post("/api/v1/tasks", json={"agent": "boss", "text": "t"})
        ).json()
        token = Path(hired["workspace"]) / "token"
        assert await eventually(lambda: _written(token))
        run = parley.client(token.read_text())
        # A send, a subtask and a node question each spend one hop of the task.
        for action, body in (
            ("send", {"to": "helper", "text": "hi"}),
            ("spawn", {"agent": "helper", "text": "sub"}),
            ("ask-node", {"node": "local", "text": "load?"}),
        ):
            assert (await run.post(f"/api/v1/act/{action}", json=body)).status_code == 200
        for _ in range(2):
            refused = await run.post("/api/v1/act/send", json={"to": "helper", "text": "more"})
            assert refused.status_code == 409
            error = refused.json()
            assert (error["error"], error["reason"], error["topic_id"]) == (
                "conflict",
                "hop_budget",
                task["id"],
            )
            assert "hop_budget" in error["message"]
        # Told once, in the task, for every member who reads it.
        assert len(await _notices(parley, f"/tasks/{task['id']}")) == 1
        # What is not a hop still works.
        remembered = await run.post("/api/v1/act/remember", json={"note": "busy day"})
        assert remembered.status_code == 200


async def _written(path: Path) -> bool:
    return path.exists() and bool(path.read_text())


async def test_stopping_a_conversation_stops_every_agent_conversation_under_it(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    async with _parley(settings, clock, budget=1_000_000) as parley:
        await _hire_ping_pong(parley, tmp_path)
        await say(parley.owner, "ping", "serve")
        assert await eventually(lambda: _run_count(parley, 30))
        stopped = await parley.owner.post("/api/v1/conversations/ping/stop")
        assert stopped.status_code == 200
        assert stopped.json()["stopped"]  # the loop's open run (and its waiting text)
        await _nothing_runs_again(parley)
        reasons = {r["reason"] for r in await _runs(parley) if r["state"] == "stopped"}
        assert reasons == {"stopped by owner"}


async def _nothing_runs_again(parley: Harness) -> None:
    """Everything is final, and stays so once the scheduler and the recorder had their turn: a
    later run of another agent ran after anything the loop might still have queued."""
    assert await eventually(lambda: _settled(parley))
    before = await _runs(parley)
    if "witness" not in {a["name"] for a in items(await get(parley.owner, "/agents"))}:
        await parley.hire("witness")
    queued = await say(parley.owner, "witness", "still there?")
    _, end = await follow(parley.owner, queued["run_id"])
    assert end["state"] == "finished"
    after = [r for r in await _runs(parley) if r["agent"] != "witness"]
    assert [(r["id"], r["state"]) for r in after] == [(r["id"], r["state"]) for r in before]


async def test_stopping_a_conversation_reaches_a_loop_inside_a_subtask(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    async with _parley(settings, clock, budget=1_000_000) as parley:
        # The person's agent hands the work to 'ping' as a subtask, where ping and its pong
        # answer each other for ever: a root of its own, under the person's conversation.
        await parley.hire(
            "manager",
            brain=script(tmp_path, "manager", "otherwise: [{spawn: {agent: ping, text: go}}]"),
        )
        await _hire_ping_pong(parley, tmp_path)
        await say(parley.owner, "manager", "delegate")
        assert await eventually(lambda: _run_count(parley, 30))
        [subtask] = items(await get(parley.owner, "/tasks"))
        assert (await parley.owner.post("/api/v1/conversations/manager/stop")).status_code == 200
        await _nothing_runs_again(parley)
        # Only its runs stopped: the subtask stays open.
        shown = await get(parley.owner, f"/tasks/{subtask['id']}")
        assert shown["topic"]["status"] == "open"


async def test_stopping_or_cancelling_a_task_stops_every_agent_conversation_under_it(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    async with _parley(settings, clock, budget=1_000_000) as parley:
        await _hire_ping_pong(parley, tmp_path, "one")
        await _hire_ping_pong(parley, tmp_path, "two")
        first = (
            await parley.owner.post("/api/v1/tasks", json={"agent": "one", "text": "go"})
        ).json()
        second = (
            await parley.owner.post("/api/v1/tasks", json={"agent": "two", "text": "go"})
        ).json()
        assert await eventually(lambda: _run_count(parley, 40))
        assert (await parley.owner.post(f"/api/v1/tasks/{first['id']}/stop")).status_code == 200
        cancelled = await parley.owner.post(f"/api/v1/tasks/{second['id']}/cancel")
        assert cancelled.json()["status"] == "cancelled"
        await _nothing_runs_again(parley)
