"""A real server on a loopback port, for the CLI and the README tour, as a user runs them."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner, Result

from parley.app import create_app
from parley.cli.main import app as cli_app
from parley.clock import Clock
from parley.people.bootstrap import owner_token_path
from parley.settings import Settings


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


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
    port = port or free_port()
    # The settings' port is the URL a command brain's `parley act` is given: the real one.
    settings = settings.model_copy(update={"port": port, **_lasting_nodes(settings)})
    app = create_app(settings, clock)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    _wait_until_healthy(url)
    try:
        yield Served(url, owner_token_path(settings.data_dir).read_text().strip())
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _lasting_nodes(settings: Settings) -> dict[str, float]:
    """On the real clock, a node that beats less often than the offline time (the tests' local
    node beats hourly) would be lost within seconds: it is lost only when a test makes it so."""
    if settings.heartbeat_seconds <= settings.node_offline_after_seconds:
        return {}
    return {"node_offline_after_seconds": settings.heartbeat_seconds * 3}


def _wait_until_healthy(url: str) -> None:
    for _ in range(500):
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"Parley did not come up at {url}")
