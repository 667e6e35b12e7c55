"""`parley node add` writes a node's credentials to a file only its user reads, once (an existing
file is kept unless --replace) and says the join command to run there; `parley node remove`
revokes them; `parley node join` takes them from a 0600 file or PARLEY_NODE_CREDENTIALS only,
and a left-over --join-token says what replaced it."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.datafolder import DataFolder
from parley.mesh.broker_auth import BrokerKeys
from parley.node.keys import NodeKey
from parley.settings import Settings
from tests.cli.test_serve import cli
from tests.served import Served


@pytest.fixture
def keyed(served: Served, settings: Settings) -> Served:
    """A hub whose broker keys exist (``parley mesh broker-config`` ran)."""
    BrokerKeys.load_or_create(DataFolder(settings.data_dir))
    return served


def test_node_add_writes_the_credentials_0600_and_says_how_to_join(
    keyed: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    added = keyed.run("node", "add", "gpu1")
    assert added.exit_code == 0, added.output
    creds = tmp_path / "gpu1.creds"
    assert creds.stat().st_mode & 0o777 == 0o600
    NodeKey.from_creds(creds.read_text())  # a node's credentials, with its key
    assert added.output.splitlines() == [
        "credentials of node gpu1 written to gpu1.creds (mode 0600, shown nowhere else); copy"
        " it to the node's machine and run there:",
        "  parley node join gpu1 --broker nats://HUB:4222 --credentials gpu1.creds",
    ]


def test_node_add_keeps_an_existing_file_and_a_live_name_unless_replace(
    keyed: Served, tmp_path: Path
) -> None:
    out = tmp_path / "n.creds"
    assert keyed.run("node", "add", "gpu1", "--out", str(out)).exit_code == 0
    first = out.read_text()
    again = keyed.run("node", "add", "gpu1", "--out", str(out))
    assert again.exit_code == 4
    assert f"{out} exists already; give another --out FILE, or pass --replace" in again.output
    other = keyed.run("node", "add", "gpu1", "--out", str(tmp_path / "other.creds"))
    assert other.exit_code == 4
    assert "parley node add gpu1 --replace" in other.output
    assert not (tmp_path / "other.creds").exists()
    replaced = keyed.run("node", "add", "gpu1", "--out", str(out), "--replace")
    assert replaced.exit_code == 0, replaced.output
    assert out.read_text() != first and out.stat().st_mode & 0o777 == 0o600


def test_node_add_of_the_hubs_own_or_without_keys_is_refused(
    served: Served, tmp_path: Path, settings: Settings
) -> None:
    out = str(tmp_path / "x.creds")
    refused = served.run("node", "add", "gpu1", "--out", out)
    assert refused.exit_code == 4
    assert "run `parley mesh broker-config --out DIR` on the hub's machine first" in refused.output
    BrokerKeys.load_or_create(DataFolder(settings.data_dir))
    refused = served.run("node", "add", "local", "--out", out)
    assert refused.exit_code == 4
    assert "node 'local' is the hub's own node" in refused.output
    assert not Path(out).exists()


def test_node_remove_revokes_and_frees_the_name(keyed: Served, tmp_path: Path) -> None:
    assert keyed.run("node", "add", "gpu1", "--out", str(tmp_path / "a")).exit_code == 0
    removed = keyed.run("node", "remove", "gpu1")
    assert removed.exit_code == 0, removed.output
    assert removed.output == "node gpu1 removed: its credentials are revoked\n"
    assert keyed.run("node", "add", "gpu1", "--out", str(tmp_path / "b")).exit_code == 0
    again = keyed.run("node", "remove", "ghost")
    assert again.exit_code == 3 and "node 'ghost' has no credentials to revoke" in again.output


def _join(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    done = cli(
        tmp_path, None, "node", "join", "gpu1", "--broker", "nats://127.0.0.1:1", *args, env=env
    )
    return done.returncode, done.stderr.strip()


def test_node_join_refuses_credentials_others_may_read(tmp_path: Path) -> None:
    creds = tmp_path / "gpu1.creds"
    creds.write_text(
        BrokerKeys.load_or_create(DataFolder(tmp_path / "hub")).issue_node("gpu1").creds
    )
    creds.chmod(0o644)
    assert _join(tmp_path, "--credentials", str(creds)) == (
        2,
        f"error: {creds} may be read by others (mode 0644): chmod 600 {creds}, then join again",
    )


def test_node_join_without_credentials_or_with_a_join_token_says_what_to_give(
    tmp_path: Path,
) -> None:
    status, said = _join(tmp_path)
    assert status == 2 and said.startswith("error: no credentials: give --credentials FILE")
    status, said = _join(tmp_path, "--join-token", "pj_old")
    assert (status, said) == (
        2,
        "error: --join-token is retired: on the hub run `parley node add NAME`, copy the file it"
        " writes here, and join with --credentials FILE",
    )
    status, said = _join(tmp_path, env={"PARLEY_NODE_CREDENTIALS": "not credentials"})
    assert status == 2 and said.startswith("error: these are not node credentials")
