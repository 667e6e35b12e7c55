"""Runs survive a restart of the hub: queued work is picked up again; a run that was running
when the process died is failed with reason 'interrupted' and its input is offered again."""

from __future__ import annotations

from pathlib import Path

import httpx

from parley.settings import Settings
from tests.runs.support import get, say
from tests.support import Harness, ManualClock, eventually, items, oldest_first, started

SLOW = "otherwise: [{sleep: 60}]"
QUICK = "otherwise: [{reply: 'handled {text}'}]"


async def _state(client: httpx.AsyncClient, run_id: int) -> str:
    state = (await get(client, f"/runs/{run_id}"))["run"]["state"]
    assert isinstance(state, str)
    return state


async def test_runs_survive_a_restart(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(SLOW)
    async with started(settings, clock) as parley:
        await parley.hire("solo", brain=f"scripted:{rules}", max_sessions=1)
        ada = parley.client(await parley.add_person("ada"))
        interrupted = await say(parley.owner, "solo", "first")
        assert await eventually(lambda: _is(parley.owner, interrupted["run_id"], "running"))
        waiting = await say(ada, "solo", "second")
        assert await _state(ada, waiting["run_id"]) == "queued"
        token = (await ada.post("/api/v1/people/ada/token")).json()["token"]
    rules.write_text(QUICK)  # the next process's brain answers at once

    async with started(settings, clock) as parley:
        shown = (await get(parley.owner, f"/runs/{interrupted['run_id']}"))["run"]
        assert (shown["state"], shown["reason"]) == ("failed", "interrupted")
        ada = parley.client(token)
        assert await eventually(lambda: _is(ada, waiting["run_id"], "finished"))
        assert await eventually(lambda: _replied(parley, parley.owner, ["handled first"]))
        assert await eventually(lambda: _replied(parley, ada, ["handled second"]))
        runs = items(await get(parley.owner, "/runs?agent=solo"))
        retried = [r for r in runs if r["id"] not in (interrupted["run_id"], waiting["run_id"])]
        assert [r["state"] for r in retried] == ["finished"]
        inputs = (await get(parley.owner, f"/runs/{retried[0]['id']}"))["input"]
        assert [m["body"] for m in inputs] == ["first"]  # offered again, exactly once


async def _is(client: httpx.AsyncClient, run_id: int, state: str) -> bool:
    return await _state(client, run_id) == state


async def _replied(parley: Harness, client: httpx.AsyncClient, expected: list[str]) -> bool:
    shown = await get(client, "/conversations/solo")
    return [m["body"] for m in oldest_first(shown["messages"]) if m["kind"] == "reply"] == expected
