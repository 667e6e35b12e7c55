"""Names owned: the owner issues each node name's credentials (once; --replace revokes the old
first; never for the hub's own node), a registration counts only signed by the key issued for
its name and heard on its name's subject (forged, unsigned, replayed, stale, another name's:
refused), and a removed node is offline at once, its credentials refused from then on."""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest

from parley.datafolder import DataFolder
from parley.errors import Unauthorized
from parley.mesh.broker_auth import BrokerKeys
from parley.mesh.registration import FRESH_SECONDS
from parley.node.keys import NodeKey, signed_register
from parley.node.messages import Heartbeat, Register, heartbeat_subject, register_subject
from parley.node.runner import NodeRunner
from tests.mesh.test_joined_node import joined
from tests.node_creds import node_key
from tests.runs.support import get, say, script
from tests.support import Harness, eventually

SLOW = "otherwise: [{sleep: 60}]"


def _keys(parley: Harness) -> None:
    BrokerKeys.load_or_create(DataFolder(parley.context.settings.data_dir))


async def _issue(parley: Harness, name: str, replace: bool = False) -> tuple[int, dict[str, str]]:
    answer = await parley.owner.post(f"/api/v1/nodes/{name}/credentials", json={"replace": replace})
    return answer.status_code, answer.json()


async def test_an_owner_is_given_a_nodes_credentials_once_and_the_hub_keeps_the_key_only(
    parley: Harness,
) -> None:
    _keys(parley)
    status, issued = await _issue(parley, "gpu1")
    assert status == 201, issued
    key = NodeKey.from_creds(issued["creds"])
    assert issued["public_key"] == key.public_key and issued["node"] == "gpu1"
    async with parley.context.store.transaction() as tx:
        live = await tx.node_credentials.live("gpu1")
    assert live is not None and live.public_key == key.public_key
    seed = re.search(r"SU[A-Z2-7]{56}", issued["creds"])
    assert seed is not None and seed.group(0) not in repr(live)  # its private part is not kept


async def test_issuing_is_refused_with_what_to_do(parley: Harness) -> None:
    status, said = await _issue(parley, "gpu1")
    assert (status, said["message"]) == (
        409,
        "the hub has no broker keys yet: run `parley mesh broker-config --out DIR` on the hub's"
        " machine first (it makes them), then issue the node's credentials",
    )
    _keys(parley)
    assert (await _issue(parley, "gpu1"))[0] == 201
    status, said = await _issue(parley, "gpu1")
    assert status == 409
    assert said["message"].startswith("node 'gpu1' has credentials already (issued ")
    assert said["message"].endswith(
        "to revoke them and issue new ones: parley node add gpu1 --replace"
    )
    status, said = await _issue(parley, "local", replace=True)
    assert (status, said["message"]) == (
        409,
        "node 'local' is the hub's own node: it needs no credentials and none are ever issued"
        " for it; give the other machine another name",
    )
    status, said = await _issue(parley, "Bad_Name")
    assert status == 400 and "node name 'Bad_Name' is invalid" in said["message"]
    mia = await parley.add_person("mia")
    async with parley.client(mia) as member:
        answer = await member.post("/api/v1/nodes/x/credentials", json={"replace": False})
        assert answer.status_code == 403
        assert (await member.delete("/api/v1/nodes/gpu1/credentials")).status_code == 403


async def test_replace_revokes_the_old_key_and_it_may_not_register_any_more(
    parley: Harness, tmp_path: Path
) -> None:
    old = await node_key(parley, "gamma")
    status, issued = await _issue(parley, "gamma", replace=True)
    assert status == 201
    new = NodeKey.from_creds(issued["creds"])
    runner = NodeRunner("gamma", parley.context.broker, old, tmp_path / "g", 3600)
    with pytest.raises(Unauthorized, match="not this node's credentials; issue new ones with"):
        await runner.start()
    await runner.stop()
    runner = NodeRunner("gamma", parley.context.broker, new, tmp_path / "g", 3600)
    await runner.start()
    await runner.stop()
    async with parley.context.store.transaction() as tx:
        revoked = [c.public_key for c in await tx.node_credentials.revoked()]
    assert revoked == [old.public_key]


async def _register(parley: Harness, message: Register, subject_node: str = "") -> dict[str, Any]:
    subject = register_subject(subject_node or message.node)
    reply = await parley.context.broker.request(subject, message.model_dump_json().encode(), 5)
    answer = json.loads(reply)
    assert isinstance(answer, dict)
    return answer


def _unsigned(node: str, key: NodeKey) -> Register:
    return Register(
        node=node,
        hostname="elsewhere",
        workspace_root="/tmp/x",
        instance="i-1",
        pid=1,
        public_key=key.public_key,
        signed_at=int(time.time() * 1000),
    )


async def test_an_unsigned_forged_replayed_or_stale_registration_is_refused(
    parley: Harness,
) -> None:
    key = await node_key(parley, "gamma")
    unsigned = _unsigned("gamma", key)
    said = await _register(parley, unsigned)
    assert said["accepted"] is False
    assert said["reason"].startswith("the registration is not signed by its credentials' key")
    forged = signed_register(NodeKey.generated(), unsigned).model_copy(
        update={"public_key": key.public_key}
    )
    assert (await _register(parley, forged))["reason"] == said["reason"]
    altered = signed_register(key, unsigned).model_copy(update={"workspace_root": "/etc"})
    assert (await _register(parley, altered))["reason"] == said["reason"]
    stale = signed_register(key, unsigned, wall=lambda: time.time() - 2 * FRESH_SECONDS)
    assert "signed 240s away from the hub's clock" in (await _register(parley, stale))["reason"]
    signed = signed_register(key, unsigned)
    assert (await _register(parley, signed))["accepted"] is True
    replayed = await _register(parley, signed)
    assert replayed == {
        "accepted": False,
        "reason": "this registration was heard already (a copy replayed)",
        "taken": False,
    }


async def test_a_registration_on_another_names_subject_or_of_the_hubs_own_is_refused(
    parley: Harness,
) -> None:
    key = await node_key(parley, "gamma")
    signed = signed_register(key, _unsigned("gamma", key))
    said = await _register(parley, signed, subject_node="delta")
    assert said["reason"] == "node 'gamma' registered on the subject of node 'delta'"
    outsider = NodeKey.generated()
    said = await _register(parley, signed_register(outsider, _unsigned("local", outsider)))
    assert (said["reason"], said["taken"]) == (
        "node 'local' is the hub's own node; join under another name",
        True,
    )


async def test_a_removed_node_is_offline_at_once_its_turns_lost_and_its_key_refused(
    parley: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key = await node_key(parley, "gamma")
    async with joined(parley, tmp_path / "g") as runner:
        await parley.hire("worker", node="gamma", brain=script(tmp_path, "slow", SLOW))
        said = await say(parley.owner, "worker", "first")
        assert await eventually(lambda: _state_is(parley, said["run_id"], "running"))
        removed = await parley.owner.delete("/api/v1/nodes/gamma/credentials")
        assert removed.status_code == 204, removed.text
        assert (await get(parley.owner, "/nodes/gamma"))["status"] == "offline"
        run = (await get(parley.owner, f"/runs/{said['run_id']}"))["run"]
        assert (run["state"], run["reason"]) == ("failed", "node_lost")
        # Whatever it still sends is not heard, and it may not register again.
        beat = Heartbeat(node="gamma", instance=runner.instance).model_dump_json().encode()
        with caplog.at_level(logging.WARNING, logger="parley.mesh.registry"):
            await parley.context.broker.publish(heartbeat_subject("gamma"), beat)
            assert await eventually(lambda: _logged(caplog, DROPPED))
        said_again = await _register(parley, signed_register(key, _unsigned("gamma", key)))
        assert said_again["reason"] == (
            "node 'gamma' has no credentials on this hub; issue them there with"
            " parley node add gamma"
        )
        assert (await get(parley.owner, "/nodes/gamma"))["status"] == "offline"
    gone = await parley.owner.delete("/api/v1/nodes/gamma/credentials")
    assert (gone.status_code, gone.json()["message"]) == (
        404,
        "node 'gamma' has no credentials to revoke",
    )
    assert (await _issue(parley, "gamma"))[0] == 201  # the name is free: no --replace


DROPPED = "dropped a heartbeat of node 'gamma': it has no credentials"


async def _logged(caplog: pytest.LogCaptureFixture, line: str) -> bool:
    return line in caplog.text


async def _state_is(parley: Harness, run_id: int, state: str) -> bool:
    return bool((await get(parley.owner, f"/runs/{run_id}"))["run"]["state"] == state)
