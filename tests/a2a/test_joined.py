"""CancelTask is Parley's stop wherever the turn runs: an exposed agent on a joined node (its own
machine, no store) has its turn cancelled there."""

from __future__ import annotations

from pathlib import Path

from tests.a2a.test_perimeter import V1, rpc
from tests.mesh.test_joined_node import SLOW, _state_is, joined
from tests.runs.support import script
from tests.support import Harness, eventually


async def test_a_cancel_stops_the_turn_on_the_joined_node(parley: Harness, tmp_path: Path) -> None:
    async with joined(parley, tmp_path / "gamma"):
        await parley.hire("sleeper", node="gamma", brain=script(tmp_path, "slow", SLOW))
        assert (await parley.owner.post("/api/v1/a2a/agents", json={"agent": "sleeper"})).is_success
        added = await parley.owner.post("/api/v1/a2a/clients", json={"name": "planner"})
        async with parley.client(added.json()["token"]) as client:
            message = {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "nap"}]}
            body = rpc(
                "SendMessage", {"message": message, "configuration": {"returnImmediately": True}}
            )
            sent = await client.post("/a2a/sleeper", json=body, headers=V1)
            task = sent.json()["result"]["task"]
            runs = (await parley.owner.get("/api/v1/runs", params={"agent": "sleeper"})).json()
            [run] = runs["items"]

            async def running() -> bool:
                return await _state_is(parley, run["id"], "running")

            assert await eventually(running, within=30)
            cancelled = await client.post(
                "/a2a/sleeper", json=rpc("CancelTask", {"id": task["id"]}), headers=V1
            )
        assert cancelled.json()["result"]["status"]["state"] == "TASK_STATE_CANCELED"

        async def stopped() -> bool:
            return await _state_is(parley, run["id"], "stopped")

        assert await eventually(stopped, within=30)
