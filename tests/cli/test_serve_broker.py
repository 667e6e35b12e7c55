"""`parley serve --broker`: a hub for nodes on other machines, as its operator starts it. A bad
or unreachable broker is one plain line at start, and so is one that lets anyone in (unless
--insecure-broker, warned of at each start); a broker that goes away later shows in /healthz
(503) and `parley node list`, and the hub reconnects by itself."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.ports import free_port
from parley.datafolder import DataFolder
from parley.mesh.broker_auth import BrokerKeys
from tests.cli.test_serve import cli
from tests.nats_server import NatsServer
from tests.support import until


def serve(
    workdir: Path, *args: str, env: dict[str, str] | None = None, log: Path | None = None
) -> subprocess.Popen[str]:
    """``log``: where its output goes (else to pipes)."""
    given = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")} | (env or {})
    # The child holds the log open on its own: ours is closed once it has started.
    with contextlib.nullcontext(subprocess.PIPE) if log is None else log.open("a") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "parley", "serve", *args],
            cwd=workdir,
            env=given,
            stdout=out,
            stderr=subprocess.STDOUT if log is not None else subprocess.PIPE,
            text=True,
        )


def refused(workdir: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """How a serve that cannot start ends: its exit status and its stderr."""
    process = serve(workdir, "--port", str(free_port()), *args, env=env)
    _, stderr = process.communicate(timeout=60)
    return process.returncode, stderr


def test_a_bad_broker_url_is_one_plain_line_and_exit_2(tmp_path: Path) -> None:
    status, stderr = refused(tmp_path, "--broker", "http://hub:4222")
    assert status == 2
    assert stderr.strip().splitlines() == [
        "error: the broker URL must start with nats:// or tls://, not 'http://'"
    ]
    assert not (tmp_path / "parley-data").exists()  # nothing was started, nor made


def test_the_broker_comes_from_parley_broker_and_parley_toml_too(tmp_path: Path) -> None:
    status, stderr = refused(tmp_path, env={"PARLEY_BROKER": "hub:4222"})
    assert status == 2 and "needs a scheme: nats:// or tls://" in stderr
    (tmp_path / "parley.toml").write_text('broker = "nats://hub:4222/path"\n')
    status, stderr = refused(tmp_path)
    assert status == 2 and "has a path or query" in stderr


def test_an_unreachable_broker_is_one_plain_line_and_exit_6(tmp_path: Path) -> None:
    BrokerKeys.load_or_create(DataFolder(tmp_path / "parley-data"))  # broker-config ran
    port = free_port()
    status, stderr = refused(tmp_path, "--broker", f"nats://127.0.0.1:{port}")
    assert status == 6
    [line] = stderr.strip().splitlines()
    assert line.startswith(f"error: cannot reach the broker at nats://127.0.0.1:{port}")


def test_a_broker_that_lets_anyone_in_is_refused_in_one_line_and_exit_4(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    BrokerKeys.load_or_create(DataFolder(tmp_path / "parley-data"))
    status, stderr = refused(tmp_path, "--broker", nats_server.url)
    assert status == 4
    assert stderr.strip().splitlines() == [
        f"error: the broker at {nats_server.url} lets anyone in (anyone who reaches it would"
        " read every turn): start nats-server with the configuration `parley mesh"
        " broker-config` writes, or pass --insecure-broker on a laptop"
    ]


def test_without_the_hubs_broker_keys_serve_says_to_make_them(tmp_path: Path) -> None:
    """Checked once the broker is known not to let anyone in, or not there (as here): the
    missing keys are said before the absent broker, since a broker is set up from them."""
    status, stderr = refused(tmp_path, "--broker", f"nats://127.0.0.1:{free_port()}")
    assert status == 4
    [line] = stderr.strip().splitlines()
    assert line.startswith("error: no broker credentials in ")
    assert "run `parley mesh broker-config --out DIR` on this machine" in line


@pytest.fixture
def hub(tmp_path: Path, nats_server: NatsServer) -> Iterator[str]:
    """A hub on ``nats_server`` that hosts no node of its own; its URL."""
    port = free_port()
    broker = ["--broker", nats_server.url, "--insecure-broker"]
    log = tmp_path / "serve.log"
    process = serve(tmp_path, "--port", str(port), *broker, "--no-local-node", log=log)
    url = f"http://127.0.0.1:{port}"
    try:
        assert until(lambda: _health(url)[0] == 200, within=60), log.read_text()
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)


def test_an_insecure_broker_is_used_when_asked_and_warned_of_at_start(
    tmp_path: Path, hub: str, nats_server: NatsServer
) -> None:
    log = (tmp_path / "serve.log").read_text()
    assert (
        f"WARNING parley.mesh.hub_broker: --insecure-broker: the broker at {nats_server.url} is"
        " used as it lets this hub in; if it lets anyone in, anyone who reaches the broker reads"
        " every turn" in log
    )
    assert _health(hub)[1]["broker"]["status"] == "connected"


def test_a_broker_gone_away_shows_in_healthz_and_node_list_until_it_is_back(
    tmp_path: Path, hub: str, nats_server: NatsServer
) -> None:
    port = int(hub.rsplit(":", 1)[1])
    status, health = _health(hub)
    assert status == 200
    assert health["broker"] == {
        "kind": "nats",
        "status": "connected",
        "url": nats_server.url,
        "last_error": None,
    }
    listed = cli(tmp_path, port, "node", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["no nodes", f"broker {nats_server.url}: connected"]

    nats_server.stop()
    assert until(lambda: _health(hub)[0] == 503, within=60)
    status, health = _health(hub)
    assert (health["status"], health["broker"]["status"]) == ("broker_away", "reconnecting")
    listed = cli(tmp_path, port, "node", "list")
    assert f"broker {nats_server.url}: reconnecting" in listed.stdout

    nats_server.start()
    assert until(lambda: _health(hub)[0] == 200, within=60)  # reconnected by itself
    assert _health(hub)[1]["broker"]["status"] == "connected"


def _health(url: str) -> tuple[int, dict[str, Any]]:
    try:
        answer = httpx.get(f"{url}/healthz", timeout=2)
    except httpx.HTTPError:
        return 0, {}
    return answer.status_code, answer.json()
