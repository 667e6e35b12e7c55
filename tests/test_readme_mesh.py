"""The README's "Many machines" tour, run as its operator runs it: its hub (``parley serve`` on
PostgreSQL and NATS), the node's credentials (``parley node add``) and its second machine
(``parley node join``) started with the exact commands of its ```sh block, on loopback (the
README's addresses and paths swapped for this test's), then its ```console mesh block against
that hub, output checked.

Its nats-server is started from the file the tour's ``parley mesh broker-config`` writes: only
the hub's and the node's credentials get in."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.machines import until
from bench.ports import free_port
from tests.cli.test_serve import cli
from tests.conftest import database_of_its_own
from tests.nats_server import running_nats_config
from tests.test_readme import PARLEY, README, Command, write_named_files

SECTION = README.read_text().split("\n## Many machines\n", 1)[1].split("\n## ", 1)[0]
# What the tour names, swapped for this test's own.
HUB_ADDRESS, BROKER = "10.0.0.1", "nats://10.0.0.1:4222"
DATABASE = "postgresql://parley@127.0.0.1/parley"
CREDS, WORKSPACES = "gpu1.creds", "/srv/parley"
FAST = {"PARLEY_HEARTBEAT_SECONDS": "0.3"}


def sh_commands() -> list[str]:
    """The commands of the section's ```sh block, comments left out."""
    [block] = re.findall(r"```sh\n(.*?)```", SECTION, re.S)
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def tour() -> list[Command]:
    [block] = re.findall(r"```console mesh\n(.*?)```", SECTION, re.S)
    commands: list[Command] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            commands.append(Command(line.removeprefix("$ "), []))
        else:
            commands[-1].shown.append(line)
    return commands


def swapped(line: str, swaps: dict[str, str]) -> list[str]:
    for theirs, ours in swaps.items():
        assert theirs in line, f"the tour's command lost {theirs!r}: {line}"
        line = line.replace(theirs, ours)
    words = shlex.split(line)
    assert words[0] == PARLEY, line
    return [sys.executable, "-m", "parley", *words[1:]]


def _clean() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}


@contextmanager
def started(argv: list[str], cwd: Path) -> Iterator[subprocess.Popen[bytes]]:
    cwd.mkdir(parents=True, exist_ok=True)
    env = _clean() | FAST
    log = (cwd / "process.log").open("ab")
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
        log.close()


def test_the_many_machines_tour_works(tmp_path: Path) -> None:
    config, nats, serve, add, join = sh_commands()
    assert nats.startswith("nats-server -c ")  # the test's own runs the file instead
    hub_dir, node_dir, port = tmp_path / "hub", tmp_path / "gpu1", free_port()
    broker_port, out = free_port(), tmp_path / "broker"
    broker_url = f"nats://127.0.0.1:{broker_port}"
    hub_dir.mkdir()
    config_argv = swapped(config, {"/etc/parley-nats": str(out)})
    config_argv = [
        w.replace(f"{HUB_ADDRESS}:4222", f"127.0.0.1:{broker_port}") for w in config_argv
    ]
    made = subprocess.run(config_argv, cwd=hub_dir, capture_output=True, text=True, env=_clean())
    assert made.returncode == 0, made.stderr
    with (
        database_of_its_own("readme_mesh") as database,
        running_nats_config(out / "nats-server.conf", broker_port),
    ):
        hub_argv = swapped(serve, {BROKER: broker_url, DATABASE: database})
        hub_argv = [word.replace(HUB_ADDRESS, "127.0.0.1") for word in hub_argv]
        with started([*hub_argv, "--port", str(port)], hub_dir):
            assert until(lambda: _healthy(port)), (hub_dir / "process.log").read_text()
            added = cli(hub_dir, port, *swapped(add, {})[3:])
            assert added.returncode == 0, added.stderr
            creds = hub_dir / CREDS
            assert creds.stat().st_mode & 0o777 == 0o600
            swaps = {BROKER: broker_url, CREDS: str(creds), WORKSPACES: str(node_dir / "w")}
            with started(swapped(join, swaps), node_dir):
                assert until(lambda: _node_status(hub_dir, port) == "online")
                write_named_files(hub_dir)
                for command in tour():
                    done = cli(hub_dir, port, *command.args(hub_dir))
                    assert done.returncode == 0, f"{command.line}: {done.stderr}"
                    if command.shown:
                        assert done.stdout.splitlines() == command.shown, command.line
                listed = cli(hub_dir, port, "node", "list")
                assert f"broker {broker_url}: connected" in listed.stdout
            assert (node_dir / "w" / "scout").is_dir()  # its workspace, on the second machine


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _node_status(hub_dir: Path, port: int) -> str | None:
    shown = cli(hub_dir, port, "node", "show", "gpu1", "--json")
    return json.loads(shown.stdout)["status"] if shown.returncode == 0 else None
