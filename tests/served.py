"""A real server on a loopback port, for the CLI and the README tour, as a user runs them."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner, Result

from bench.ports import free_port
from parley.app import create_app
from parley.cli.main import app as cli_app
from parley.cli.serving import ParleyServer
from parley.clock import Clock
from parley.people.bootstrap import owner_token_path
from parley.settings import Settings


@dataclass
class Served:
    url: str
    owner_token: str

    def run(
        self, *args: str, token: str | None = None, env: dict[str, str] | None = None
    ) -> Result:
        given = {"PARLEY_URL": self.url, "PARLEY_TOKEN": token or self.owner_token}
        return CliRunner().invoke(cli_app, list(args), env=given | (env or {}))


@pytest.fixture
def served(settings: Settings) -> Iterator[Served]:
    with serving(settings) as server:
        yield server


@contextmanager
def serving(
    settings: Settings, clock: Clock | None = None, port: int | None = None
) -> Iterator[Served]:
    """A real server for ``settings`` on a loopback port (``port``, or a free one), on a
    thread of its own with its own event loop, until the block ends."""
    for tries_left in reversed(range(3 if port is None else 1)):
        try:
            server, thread, url = _start(settings, clock, port or free_port())
            break
        except PortTaken:
            if not tries_left:
                raise
    try:
        yield Served(url, owner_token_path(settings.data_dir).read_text().strip())
    finally:
        # As parley serve stops, open page streams ending first; not through handle_exit, which
        # sse-starlette patches to end every later event stream of the process (A2A's too).
        server.end_streams()
        server.should_exit = True
        thread.join(timeout=10)


def _start(
    settings: Settings, clock: Clock | None, port: int
) -> tuple[ParleyServer, threading.Thread, str]:
    # The settings' port is the URL a command brain's `parley act` is given: the real one.
    settings = settings.model_copy(update={"port": port, **_lasting_nodes(settings)})
    app = create_app(settings, clock)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=2
    )
    server = ParleyServer(config, app)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    _wait_until_healthy(url, server=(server, thread))
    return server, thread, url


def _lasting_nodes(settings: Settings) -> dict[str, float]:
    """On the real clock, a node that beats less often than the offline time (the tests' local
    node beats hourly) would be lost within seconds: it is lost only when a test makes it so."""
    if settings.heartbeat_seconds <= settings.node_offline_after_seconds:
        return {}
    return {"node_offline_after_seconds": settings.heartbeat_seconds * 3}


def _wait_until_healthy(
    url: str,
    process: subprocess.Popen[Any] | None = None,
    server: tuple[uvicorn.Server, threading.Thread] | None = None,
) -> None:
    """Until the server at ``url`` answers /healthz and is the one started here: a free port
    is free only when asked, and another test's server given the same one answers too (seen in
    CI: a CLI then found no owner token where its server should have written one)."""
    port = int(url.rsplit(":", 1)[1])
    for _ in range(500):
        if process is not None and process.poll() is not None:
            left = process.returncode
            raise PortTaken(f"parley serve left with {left} before it answered at {url}")
        if server is not None and not server[1].is_alive():
            raise PortTaken(f"the server thread for {url} ended before it listened")
        started = server is None or server[0].started
        # In this order: which process listens is read from /proc/net/tcp (every socket of the
        # machine), asked every 20 ms until a server came up: 6% of the test workers' time, sampled
        # over a whole run. Asked once something answers, it is asked a time or two.
        if started and _answers(url) and (process is None or listens(process.pid, port)):
            return
        time.sleep(0.02)
    raise RuntimeError(f"Parley did not come up at {url}")


class PortTaken(RuntimeError):
    """The port picked was taken by someone else before the server listened on it."""


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds the socket listening on loopback ``port`` (Linux's /proc;
    elsewhere, taken on trust)."""
    table = Path("/proc/net/tcp")
    if not table.exists():
        return True
    inodes = {
        fields[9]
        for fields in (line.split() for line in table.read_text().splitlines()[1:])
        if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port
    }
    try:
        held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    except OSError:
        return False
    return any(f"socket:[{inode}]" in held for inode in inodes)
