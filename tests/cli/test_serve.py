"""`parley serve` on the embedded default, as the README's first command runs it."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.ports import free_port
from tests.served import _wait_until_healthy


@contextmanager
def serving(
    workdir: Path,
    port: int,
    extra_env: dict[str, str] | None = None,
    python_args: list[str] | None = None,
) -> Iterator[subprocess.Popen[str]]:
    """`parley serve` on ``port`` until the block ends (``python_args``: what the interpreter is
    given instead of ``-m parley serve --port PORT``, for a probe that serves on that port)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env |= extra_env or {}
    process = subprocess.Popen(
        [sys.executable, *(python_args or ["-m", "parley", "serve", "--port", str(port)])],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_until_healthy(f"http://127.0.0.1:{port}", process=process)
        yield process
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
        if process.stdout is not None:  # read by tests once it has stopped: the pipe closed
            said = process.stdout.read()
            process.stdout.close()
            process.stdout = io.StringIO(said)


def cli(
    workdir: Path,
    port: int | None,
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    given = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")} | (env or {})
    if port is not None:
        given["PARLEY_PORT"] = str(port)  # the CLI finds the server the way serve was told
    return subprocess.run(
        [sys.executable, "-m", "parley", *args],
        cwd=workdir,
        env=given,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_first_start_creates_everything_and_a_second_start_reuses_it(tmp_path: Path) -> None:
    port = free_port()
    with serving(tmp_path, port) as first:
        listed = cli(tmp_path, port, "node", "list", "--json")
        hired = cli(tmp_path, port, "agent", "hire", "scribe", "--node", "local", "--json")
    first_log = first.stdout.read() if first.stdout else ""
    data = tmp_path / "parley-data"
    assert "owner 'owner' created; API token saved in parley-data/private/owner-token" in first_log
    with sqlite3.connect(data / "private" / "parley.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert listed.returncode == 0, listed.stderr  # the CLI found the owner token by itself
    assert hired.returncode == 0, hired.stderr
    token = (data / "private" / "owner-token").read_text()
    modes = _modes(data)  # whichever of the store's -wal and -shm exist: 0600 like the store
    assert modes.pop(".") == modes.pop("private") == 0o700
    assert {"parley.db", "owner-token", "server.lock"} <= set(modes)
    assert set(modes.values()) == {0o600}

    with serving(tmp_path, port) as second:
        response = httpx.get(
            f"http://127.0.0.1:{port}/api/v1/agents/scribe",
            headers={"Authorization": f"Bearer {token.strip()}"},
        )
        nodes = cli(tmp_path, port, "node", "list", "--json")
    second_log = second.stdout.read() if second.stdout else ""
    assert response.status_code == 200 and response.json()["lifecycle"] == "active"
    assert "created" not in second_log
    assert (data / "private" / "owner-token").read_text() == token
    assert nodes.stdout.count('"name": "local"') == 1


def test_bad_settings_are_refused_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "parley.toml").write_text('port = "eighty"\n')
    result = cli(tmp_path, None, "serve")
    assert result.returncode == 2
    assert "bad settings: port" in result.stderr
    assert not (tmp_path / "parley-data").exists()


def _modes(data: Path) -> dict[str, int]:
    """Permission bits of the data folder, its private part and each file directly in it."""
    private = data / "private"
    modes = {".": data.stat().st_mode, "private": private.stat().st_mode}
    modes |= {p.name: p.stat().st_mode for p in private.iterdir() if p.is_file()}
    return {name: mode & 0o777 for name, mode in modes.items()}
