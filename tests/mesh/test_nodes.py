"""Nodes join across the broker with their own credentials, send heartbeats, and keep their
session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from parley.errors import Unauthorized
from parley.node.keys import NodeKey
from parley.node.messages import Heartbeat, heartbeat_subject, register_subject
from parley.node.runner import NodeRunner
from tests.node_creds import node_key
from tests.support import Harness, eventually, items


async def _status_is(parley: Harness, name: str, status: str) -> bool:
    return bool((await _node(parley, name))["status"] == status)


async def _node(parley: Harness, name: str) -> dict[str, Any]:
    response = await parley.owner.get(f"/api/v1/nodes/{name}")
    assert response.status_code == 200, response.text
    node = response.json()
    assert isinstance(node, dict)
    return node


async def test_the_local_node_registered_at_start_with_its_session(parley: Harness) -> None:
    nodes = items((await parley.owner.get("/api/v1/nodes")).json())
    assert [(n["name"], n["status"], n["session"]) for n in nodes] == [
        ("local", "online", "node:local")
    ]
    session = await parley.agent("node:local")
    assert session["kind"] == "node" and session["lifecycle"] == "inherent"


async def test_a_second_node_joins_through_the_broker(parley: Harness, beta: NodeRunner) -> None:
    node = await _node(parley, "beta")
    assert node["status"] == "online" and node["session"] == "node:beta"
    assert (await parley.agent("node:beta"))["node"] == "beta"


async def test_a_node_without_credentials_is_refused(parley: Harness, tmp_path: Path) -> None:
    key = NodeKey.generated()
    runner = NodeRunner("intruder", parley.context.broker, key, tmp_path / "x", 1)
    with pytest.raises(Unauthorized, match="node 'intruder' has no credentials on this hub; issue"):
        await runner.start()
    await runner.stop()
    assert (await parley.owner.get("/api/v1/nodes/intruder")).status_code == 404


async def test_a_malformed_registration_is_refused_with_a_reason(parley: Harness) -> None:
    reply = await parley.context.broker.request(register_subject("x"), b'{"node": 3}', timeout=2)
    assert json.loads(reply)["accepted"] is False
    assert "malformed registration" in json.loads(reply)["reason"]


async def test_heartbeats_keep_a_node_online_and_silence_takes_it_offline(parley: Harness) -> None:
    offline_after = parley.context.settings.node_offline_after_seconds
    parley.clock.advance(seconds=offline_after + 1)
    assert (await _node(parley, "local"))["status"] == "offline"
    beat = Heartbeat(node="local").model_dump_json().encode()
    await parley.context.broker.publish(heartbeat_subject("local"), beat)
    assert await eventually(lambda: _status_is(parley, "local", "online"))
    node = await _node(parley, "local")
    assert node["status"] == "online"
    assert node["last_seen_at"].startswith(parley.clock.now().strftime("%Y-%m-%dT%H:%M:%S"))


async def test_a_heartbeat_on_another_nodes_subject_is_ignored(
    parley: Harness, beta: NodeRunner
) -> None:
    before = (await _node(parley, "local"))["last_seen_at"]
    parley.clock.advance(seconds=60)
    beat = Heartbeat(node="local").model_dump_json().encode()
    await parley.context.broker.publish(heartbeat_subject("beta"), beat)
    await parley.context.broker.publish(heartbeat_subject("beta"), _beat_of(beta))
    assert await eventually(lambda: _status_is(parley, "beta", "online"))  # the next was heard
    assert (await _node(parley, "local"))["last_seen_at"] == before


def _beat_of(node: NodeRunner) -> bytes:
    return Heartbeat(node=node.name, instance=node.instance).model_dump_json().encode()


async def test_an_owner_sets_a_nodes_engram(parley: Harness) -> None:
    response = await parley.owner.put("/api/v1/nodes/local/engram", json={"engram": "terse, kind"})
    assert response.status_code == 200
    assert (await _node(parley, "local"))["engram"] == "terse, kind"


async def test_an_engram_for_an_unknown_node_is_404(parley: Harness) -> None:
    response = await parley.owner.put("/api/v1/nodes/nowhere/engram", json={"engram": "x"})
    assert response.status_code == 404
    assert response.json()["message"] == "no node named 'nowhere'"


async def test_an_oversized_engram_is_refused(parley: Harness) -> None:
    response = await parley.owner.put("/api/v1/nodes/local/engram", json={"engram": "x" * 20_001})
    assert response.status_code == 400
    assert (await _node(parley, "local"))["engram"] == ""


NODE_SESSION_ATTEMPTS = [
    ("post", "/api/v1/agents/node:local/retire", {}, "cannot be retired"),
    ("post", "/api/v1/agents/node:local/retire", {"force": True}, "cannot be retired"),
    ("post", "/api/v1/agents/node:local/reassign", {"node": "beta"}, "cannot be reassigned"),
    ("post", "/api/v1/agents/node:local/warnings", {"reason": "x"}, "cannot be warned"),
    ("delete", "/api/v1/agents/node:local", None, "cannot be deleted"),
    ("delete", "/api/v1/nodes/local/session", None, "cannot lose its node session"),
]


@pytest.mark.parametrize(("method", "path", "body", "says"), NODE_SESSION_ATTEMPTS)
async def test_the_node_session_refuses_the_hiring_lifecycle(
    parley: Harness, beta: NodeRunner, method: str, path: str, body: object, says: str
) -> None:
    response = await parley.owner.request(method.upper(), path, json=body)
    assert response.status_code == 409
    assert says in response.json()["message"]
    session = await parley.agent("node:local")
    assert (session["lifecycle"], session["node"]) == ("inherent", "local")


async def test_a_node_session_cannot_be_hired(parley: Harness) -> None:
    response = await parley.owner.post(
        "/api/v1/agents", json={"name": "node:local", "node": "local"}
    )
    assert response.status_code == 400
    assert "agent name 'node:local' is invalid" in response.json()["message"]


async def test_a_running_node_sends_heartbeats_by_itself(parley: Harness, tmp_path: Path) -> None:
    key = await node_key(parley, "beta")
    runner = NodeRunner("beta", parley.context.broker, key, tmp_path / "beta", 0.01)
    await runner.start()
    try:
        parley.clock.advance(hours=1)
        assert await eventually(lambda: _status_is(parley, "beta", "online"))
        assert (await _node(parley, "local"))["status"] == "offline"
    finally:
        await runner.stop()
