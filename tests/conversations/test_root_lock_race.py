"""A stop, a send and a turn's end under one root, at the same moment, on PostgreSQL (where
transactions run side by side; SQLite's one writer orders them already): each takes the root's
row first, through ``TopicsRepo.lock`` (docs/architecture.md, "Lock order"), so none deadlocks,
none is lost, and the turn ends once — stopped or answered, never both."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tests.support import Harness, eventually

ROUNDS = 12


async def _waiting_turn(parley: Harness, agent: str) -> int:
    found: list[int] = []

    async def waiting() -> bool:
        turns = (await parley.owner.get("/api/v1/me/turns")).json()["items"]
        found[:] = [t["run"]["id"] for t in turns if t["run"]["agent"] == agent]
        return bool(found)

    assert await eventually(waiting)
    return found[0]


async def _race(parley: Harness, agent: str, run_id: int) -> list[httpx.Response]:
    stop = parley.owner.post(f"/api/v1/runs/{run_id}/stop")
    answer = parley.owner.post(f"/api/v1/runs/{run_id}/answer", json={"text": "done"})
    send = parley.owner.post(f"/api/v1/conversations/{agent}/messages", json={"text": "more"})
    return list(await asyncio.gather(stop, answer, send))


async def _run(parley: Harness, run_id: int) -> dict[str, Any]:
    shown = (await parley.owner.get(f"/api/v1/runs/{run_id}")).json()
    assert isinstance(shown, dict)
    return shown


async def test_a_stop_a_send_and_an_end_under_one_root_neither_deadlock_nor_lose_anything(
    parley: Harness, database_url: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite has one writer: its transactions never run side by side")
    outcomes = set()
    for number in range(ROUNDS):
        agent = f"ann{number}"
        await parley.hire(agent, human="owner")
        said = await parley.owner.post(
            f"/api/v1/conversations/{agent}/messages", json={"text": "first"}
        )
        assert said.status_code == 202, said.text
        run_id = await _waiting_turn(parley, agent)
        stopped, answered, sent = await _race(parley, agent, run_id)
        assert stopped.status_code == 200, stopped.text
        assert answered.status_code in (200, 409), answered.text  # 409: stopped first
        assert sent.status_code == 202, sent.text
        was_stopped = run_id in stopped.json()["stopped"]
        run = await _run(parley, run_id)
        state = run.get("run", run)["state"]
        assert (state == "stopped") == was_stopped, (stopped.text, answered.text, run)
        if answered.status_code == 200:  # an answer to a stopped turn shows it stopped
            assert answered.json()["state"] == state, answered.text
        outcomes.add(state)
        texts = await _texts(parley, agent)
        assert texts.count("more") == 1, texts  # the send is kept whoever won
        assert texts.count("done") == (0 if was_stopped else 1), texts
    assert outcomes <= {"stopped", "finished"}, outcomes


async def _texts(parley: Harness, agent: str) -> list[str]:
    shown = (await parley.owner.get(f"/api/v1/conversations/{agent}")).json()
    return [message["body"] for message in shown["messages"]["items"]]
