"""Nodes are who they say: a second process joining under the name of a node online is refused,
naming the one that has it, unless it comes to replace it (then the first is told and stops, and
its turns run again on the newcomer, not twice); the hub's own node is never taken; a name whose
node went silent is free again."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

import pytest

from parley.errors import Conflict
from parley.node.keys import NodeKey
from parley.node.messages import Heartbeat, HeldTurns, heartbeat_subject, held_subject
from parley.node.runner import NodeRunner
from tests.mesh.test_joined_node import SLOW, joined
from tests.node_creds import node_key
from tests.runs.support import get, say, script
from tests.support import Harness, eventually, items


async def _runner(
    parley: Harness, name: str, workspaces: Path, replace: bool = False
) -> NodeRunner:
    key = await node_key(parley, name)
    return NodeRunner(name, parley.context.broker, key, workspaces, 3600, replace=replace)


async def _state_is(parley: Harness, run_id: int, state: str) -> bool:
    return bool((await get(parley.owner, f"/runs/{run_id}"))["run"]["state"] == state)


async def test_a_second_join_of_a_node_online_is_refused_naming_the_one_running(
    parley: Harness, beta: NodeRunner, tmp_path: Path
) -> None:
    second = await _runner(parley, "beta", tmp_path / "elsewhere")
    with pytest.raises(Conflict) as refused:
        await second.start()
    await second.stop()
    assert refused.value.message == (
        f"the hub refused this join: node 'beta' is online already (host {socket.gethostname()},"
        f" pid {os.getpid()}, workspaces {(tmp_path / 'beta').resolve()}, last heard 0s ago);"
        " stop that one first, or join with --replace to take its place"
    )
    node = await get(parley.owner, "/nodes/beta")
    assert node["workspace_root"] == str((tmp_path / "beta").resolve())  # not switched
    hired = await parley.hire("scribe", node="beta")
    assert hired["workspace"] == str((tmp_path / "beta" / "scribe").resolve())
    assert not beta.taken_over.is_set()


async def test_a_name_whose_node_went_silent_is_free_again(
    parley: Harness, beta: NodeRunner, tmp_path: Path
) -> None:
    parley.clock.advance(seconds=parley.context.settings.node_offline_after_seconds + 1)
    second = await _runner(parley, "beta", tmp_path / "elsewhere")
    await second.start()
    try:
        node = await get(parley.owner, "/nodes/beta")
        assert (node["status"], node["workspace_root"]) == (
            "online",
            str((tmp_path / "elsewhere").resolve()),
        )
        assert beta.taken_over.is_set()  # told, in case it was only away: it stops being beta
    finally:
        await second.stop()


async def test_a_name_whose_process_is_gone_is_free_before_its_heartbeats_lapse(
    parley: Harness, beta: NodeRunner, tmp_path: Path
) -> None:
    """Killed and started again at once, say: the one online by its last heartbeat no longer
    listens, so the newcomer needs no --replace."""
    await beta.stop()
    again = await _runner(parley, "beta", tmp_path / "again")
    await again.start()
    try:
        node = await get(parley.owner, "/nodes/beta")
        assert node["workspace_root"] == str((tmp_path / "again").resolve())
    finally:
        await again.stop()


async def test_the_hubs_own_node_is_never_taken(parley: Harness, tmp_path: Path) -> None:
    for replace in (False, True):
        outsider = NodeKey.generated()  # no credentials are ever issued for the hub's own
        broker = parley.context.broker
        intruder = NodeRunner("local", broker, outsider, tmp_path / "x", 3600, replace=replace)
        with pytest.raises(Conflict, match="node 'local' is the hub's own node; join under"):
            await intruder.start()
        await intruder.stop()
    node = await get(parley.owner, "/nodes/local")
    assert node["workspace_root"] == str(parley.context.settings.data_dir.resolve() / "workspaces")


async def test_replace_takes_over_the_name_and_the_turns_run_once_on_the_newcomer(
    parley: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with joined(parley, tmp_path / "old") as old:
        await parley.hire("worker", node="gamma", brain=script(tmp_path, "slow", SLOW))
        said = await say(parley.owner, "worker", "first")
        assert await eventually(lambda: _state_is(parley, said["run_id"], "running"))
        async with joined(parley, tmp_path / "new", replace=True) as new:
            assert old.taken_over.is_set()
            assert old.taken_by is not None and old.taken_by.instance == new.instance
            assert old.taken_by.pid == os.getpid()
            lost = (await get(parley.owner, f"/runs/{said['run_id']}"))["run"]
            assert (lost["state"], lost["reason"]) == ("failed", "node_lost")
            runs = items(await get(parley.owner, "/runs?agent=worker"))
            retry = next(r for r in runs if r["id"] != said["run_id"])
            assert await eventually(lambda: _state_is(parley, retry["id"], "running"))
            # The newcomer runs it, and it alone listens (the running state comes first).
            assert await eventually(lambda: _holds(parley, "gamma", [retry["id"]]))
            for _ in range(20):
                assert await _holds(parley, "gamma", [retry["id"]])
            node = await get(parley.owner, "/nodes/gamma")
            assert node["workspace_root"] == str((tmp_path / "new").resolve())
            # A heartbeat of the old one is not the node's: it is told again, and not heard.
            parley.clock.advance(seconds=60)
            with caplog.at_level(logging.WARNING, logger="parley.mesh.registry"):
                await parley.context.broker.publish(heartbeat_subject("gamma"), _beat(old))
                assert await eventually(lambda: _logged(caplog, STALE))
            assert (await get(parley.owner, "/nodes/gamma"))["status"] == "offline"


async def _holds(parley: Harness, node: str, run_ids: list[int]) -> bool:
    """Whether the node's listener says it runs these turns (one listener, chosen at random,
    answers: the old one, were it still listening, would say it runs none)."""
    reply = await parley.context.broker.request(held_subject(node), b"{}", timeout=5)
    return HeldTurns.model_validate_json(reply).run_ids == run_ids


STALE = "heartbeat from a replaced instance of node gamma: told to stop"


async def _logged(caplog: pytest.LogCaptureFixture, line: str) -> bool:
    return line in caplog.text


def _beat(node: NodeRunner) -> bytes:
    beat = Heartbeat(node=node.name, instance=node.instance)
    return beat.model_dump_json().encode()
