"""Machines of one mesh on loopback, each a process of its own, for bench/mesh.py and the
many-machines tests: a hub (``parley serve --broker`` on NATS, or with its in-process
broker) and ``parley node join`` processes, each logging to a file of its own under ``place``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from bench.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
# Quick heartbeats, and a node silent for 3 s lost: for faults to show within a test.
HEARTBEAT = {"PARLEY_HEARTBEAT_SECONDS": "0.3", "PARLEY_NODE_OFFLINE_AFTER_SECONDS": "3"}
HUB = {"PARLEY_LOG_LEVEL": "info"}

T = TypeVar("T")


def until(check: Callable[[], T], within: float = 60.0, pause: float = 0.1) -> T | None:
    """What ``check`` gives once it is truthy, asked every ``pause`` seconds, or None after
    ``within`` seconds (the bound guards a hang)."""
    deadline = time.monotonic() + within
    while not (found := check()):
        if time.monotonic() > deadline:
            return None
        time.sleep(pause)
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs: not gone, not a zombie left for an init that does not
    reap (as in some containers). One that ends while its state is read is gone
    (``ProcessLookupError``, an ``OSError``, as its file vanishing is)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


class Machines:
    """A hub on ``database_url`` and ``broker_url`` (None: the in-process broker, no nodes)."""

    def __init__(
        self,
        place: Path,
        database_url: str,
        broker_url: str | None,
        hub_env: dict[str, str] | None = None,
        heartbeat: dict[str, str] = HEARTBEAT,
        insecure: bool = False,
    ) -> None:
        """``heartbeat``: the hub's and nodes' heartbeat settings (quick by default, for
        faults to show within a test; a bench passes {} for an operator's defaults).
        ``insecure``: the broker lets anyone in, and the hub is told so (--insecure-broker);
        by default it is started from ``broker_config``'s file, as the README says."""
        self.place, self.database_url, self.broker_url = place, database_url, broker_url
        self.heartbeat, self.insecure = heartbeat, insecure
        self.hub_env = heartbeat | HUB | (hub_env or {})
        self.port = free_port()
        self.hub_dir = place / "hub"
        self.hub: subprocess.Popen[bytes] | None = None
        self.nodes: dict[str, subprocess.Popen[bytes]] = {}
        self.api = httpx.Client(base_url=f"http://127.0.0.1:{self.port}/api/v1", timeout=30)

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
        # The process writes to its own copy of the file's descriptor: ours is closed at once.
        with (self.place / f"{name}.log").open("ab") as log:
            return subprocess.Popen(
                [sys.executable, "-m", *argv],
                cwd=ROOT,
                env=clean | env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def broker_config(self, port: int) -> Path:
        """The nats-server configuration for this mesh's hub, listening on 127.0.0.1:``port``,
        written by ``parley mesh broker-config`` as the README says (the hub's keys made in its
        data folder the first time); start the broker from it before ``start_hub``."""
        out = self.place / "broker"
        config = [sys.executable, "-m", "parley", "mesh", "broker-config", "--out", str(out)]
        config += ["--listen", f"127.0.0.1:{port}", "--data-dir", str(self.hub_dir)]
        subprocess.run(config, check=True, cwd=ROOT, capture_output=True)
        return out / "nats-server.conf"

    def start_hub(self) -> None:
        argv = ["parley", "serve", "--data-dir", str(self.hub_dir), "--port", str(self.port)]
        argv += ["--database-url", self.database_url]
        if self.broker_url is not None:
            argv += ["--broker", self.broker_url]
            if self.insecure:
                from parley.datafolder import DataFolder
                from parley.mesh.broker_auth import BrokerKeys

                # Nodes' credentials are issued from the hub's keys even on an open broker.
                BrokerKeys.load_or_create(DataFolder(self.hub_dir))
                argv += ["--insecure-broker"]
        self.hub = self._spawn("hub", argv, self.hub_env)
        assert until(self._healthy), self.log("hub")
        token = (self.hub_dir / "private" / "owner-token").read_text().strip()
        self.api.headers["Authorization"] = f"Bearer {token}"

    def _healthy(self) -> bool:
        try:
            return self.api.get(f"http://127.0.0.1:{self.port}/healthz").status_code == 200
        except httpx.HTTPError:
            return False

    def credentials(self, name: str) -> Path:
        """Node ``name``'s .creds file (0600), issued by the hub the first time (node add)."""
        path = self.place / f"{name}.creds"
        if not path.exists():
            issued = self.api.post(f"/nodes/{name}/credentials", json={"replace": False})
            assert issued.status_code == 201, issued.text
            path.touch(mode=0o600)
            path.write_text(issued.json()["creds"])
        return path

    def join(
        self, name: str, credentials: Path | None = None, replace: bool = False
    ) -> subprocess.Popen[bytes]:
        """``credentials``: a .creds file (by default, those issued for ``name``)."""
        assert self.broker_url is not None
        creds = credentials or self.credentials(name)
        argv = ["parley", "node", "join", name, "--broker", self.broker_url]
        argv += ["--credentials", str(creds), "--workspaces", str(self.place / name)]
        argv += ["--data-dir", str(self.place / f"{name}-data")]
        argv += ["--replace"] if replace else []
        node = self._spawn(name, argv, self.heartbeat)
        self.nodes[name] = node
        return node

    def joined(self, name: str) -> None:
        """Node ``name`` started and seen online by the hub."""
        self.join(name)
        assert until(lambda: self.node(name)["status"] == "online"), self.log(name)

    def node(self, name: str) -> dict[str, Any]:
        answer = self.api.get(f"/nodes/{name}")
        return answer.json() if answer.status_code == 200 else {"status": "absent"}

    def hire(self, name: str, node: str, brain: str, max_sessions: int = 1) -> None:
        body = {"name": name, "node": node, "brain": brain, "max_sessions": max_sessions}
        hired = self.api.post("/agents", json=body)
        assert hired.status_code == 201, hired.text
        assert until(lambda: self.api.get(f"/agents/{name}").json()["lifecycle"] == "active")

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """SIGKILL: no shutdown of any kind."""
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in [*self.nodes.values(), *([self.hub] if self.hub else [])]:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
        self.api.close()

    def log(self, name: str) -> str:
        return (self.place / f"{name}.log").read_text(errors="replace")[-4000:]
