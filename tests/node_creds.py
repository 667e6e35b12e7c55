"""Node credentials for tests, issued as an owner issues them (``parley node add``): the hub's
broker keys made first (what ``parley mesh broker-config`` does), each name's .creds kept in
the hub's data folder so that every runner of one name in a test holds the same."""

from __future__ import annotations

from pathlib import Path

from parley.datafolder import DataFolder
from parley.mesh.broker_auth import BrokerKeys
from parley.node.keys import NodeKey
from tests.support import Harness


def creds_file(data_dir: Path, name: str) -> Path:
    return data_dir / f"{name}.creds"


async def node_creds(parley: Harness, name: str) -> str:
    """The .creds text of node ``name`` (issued through the API the first time)."""
    data_dir = parley.context.settings.data_dir
    kept = creds_file(data_dir, name)
    if not kept.exists():
        BrokerKeys.load_or_create(DataFolder(data_dir))
        answer = await parley.owner.post(
            f"/api/v1/nodes/{name}/credentials", json={"replace": False}
        )
        assert answer.status_code == 201, answer.text
        kept.write_text(answer.json()["creds"])
        kept.chmod(0o600)
    return kept.read_text()


async def node_key(parley: Harness, name: str) -> NodeKey:
    return NodeKey.from_creds(await node_creds(parley, name))
