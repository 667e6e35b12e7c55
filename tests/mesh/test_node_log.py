"""The operator's log of the mesh: one INFO line when a node joins, when it is lost (silent past
the offline time) and when it is back, however often its status is read."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import pytest

from parley.node.messages import (
    Heartbeat,
    ProvisionReply,
    heartbeat_subject,
    provision_subject,
)
from parley.node.runner import NodeRunner
from parley.settings import Settings
from tests.node_creds import node_key
from tests.support import Harness, ManualClock, eventually, started


@pytest.fixture(autouse=True)
def _info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="parley")


def node_lines(caplog: pytest.LogCaptureFixture, node: str) -> list[str]:
    # The fixtures' records too: a node that a fixture started joined in the setup phase.
    records = caplog.get_records("setup") + caplog.records
    return [
        record.getMessage()
        for record in records
        if record.levelno == logging.INFO and record.getMessage().startswith(f"node {node} ")
    ]


async def test_a_join_is_logged_once_with_its_host(
    parley: Harness, beta: NodeRunner, caplog: pytest.LogCaptureFixture
) -> None:
    [line] = node_lines(caplog, "beta")
    assert line.startswith(f"node beta joined host={socket.gethostname()} workspaces=")


async def test_a_loss_and_a_return_are_logged_once_each(
    settings: Settings, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    # A quarter of the offline time between looks: 50 ms here.
    quick = settings.model_copy(update={"node_offline_after_seconds": 0.2})
    async with started(quick, clock) as parley:
        assert len(node_lines(caplog, "local")) == 1  # the join
        clock.advance(seconds=30)
        assert await eventually(lambda: _logged(caplog, "node local lost"))
        for _ in range(3):  # reads of the status change nothing
            assert (await parley.owner.get("/api/v1/nodes/local")).json()["status"] == "offline"
        await asyncio.sleep(0.2)  # several more looks
        beat = Heartbeat(node="local").model_dump_json().encode()
        await parley.context.broker.publish(heartbeat_subject("local"), beat)
        assert await eventually(lambda: _logged(caplog, "node local back online"))
        await asyncio.sleep(0.2)
    joined, lost, back = node_lines(caplog, "local")
    assert joined.startswith("node local joined ")
    assert lost == "node local lost last_seen=30s ago"
    assert back == "node local back online"


async def _logged(caplog: pytest.LogCaptureFixture, start: str) -> bool:
    return any(record.getMessage().startswith(start) for record in caplog.records)


async def test_a_node_back_through_heartbeats_alone_makes_the_workspaces_that_waited(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    """Its connection cut for a while, then back: it never registers again, its heartbeats say
    it is back, and the agent hired onto it meanwhile gets its workspace."""
    quick = settings.model_copy(update={"node_offline_after_seconds": 0.2})
    async with started(quick, clock) as parley:
        key = await node_key(parley, "beta")
        beta = NodeRunner("beta", parley.context.broker, key, tmp_path / "beta", 3600)
        await beta.start()
        await beta.stop()  # cut off: it answers nothing
        clock.advance(seconds=30)
        assert await eventually(lambda: _status_is(parley, "beta", "offline"))
        hired = await parley.hire("scribe", node="beta")
        assert hired["lifecycle"] == "hired"  # its workspace waits for beta
        made = tmp_path / "beta" / "scribe"

        async def provision(data: bytes) -> bytes:  # beta's side, as the wire has it
            made.mkdir(parents=True)
            return ProvisionReply(workspace=str(made)).model_dump_json().encode()

        await parley.context.broker.subscribe(provision_subject("beta"), provision)
        beat = Heartbeat(node="beta").model_dump_json().encode()
        await parley.context.broker.publish(heartbeat_subject("beta"), beat)
        assert await eventually(lambda: _lifecycle_is(parley, "scribe", "active"))
        assert made.is_dir()


async def _status_is(parley: Harness, node: str, status: str) -> bool:
    shown = await parley.owner.get(f"/api/v1/nodes/{node}")
    return bool(shown.json()["status"] == status)


async def _lifecycle_is(parley: Harness, agent: str, lifecycle: str) -> bool:
    return bool((await parley.agent(agent))["lifecycle"] == lifecycle)
