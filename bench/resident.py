"""The resident memory of an idle ``parley serve`` on a given store: started as a user starts
it, left idle, then its RSS (with any child processes) read from /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench.ports import free_port

IDLE_SECONDS = 5.0


def idle_server_rss_mb(database_url: str, data_dir: Path) -> float:
    """Start ``parley serve`` on ``database_url``, wait until it answers, leave it idle, and
    return the RSS of it and its children in MB; the server is stopped afterwards."""
    port = free_port()
    parley = Path(sys.executable).with_name("parley")
    server = subprocess.Popen(
        [
            str(parley),
            "serve",
            "--data-dir",
            str(data_dir),
            "--port",
            str(port),
            *_quiet(database_url),
        ],
        env=_with_this_checkout(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_until_up(server, port)
        time.sleep(IDLE_SECONDS)
        return sum(_rss_kb(pid) for pid in [server.pid, *_children(server.pid)]) / 1024
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _with_this_checkout() -> dict[str, str]:
    """The server runs this checkout's code, as the bench does, whichever venv is used."""
    root = str(Path(__file__).resolve().parent.parent)
    paths = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _quiet(database_url: str) -> list[str]:
    return ["--database-url", database_url, "--log-level", "warning"]


def _wait_until_up(server: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            stderr = server.stderr.read().decode() if server.stderr else ""
            raise RuntimeError(f"parley serve exited with {server.returncode}: {stderr}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("parley serve did not answer within 120 s")


def _rss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((line for line in status.splitlines() if line.startswith("VmRSS:")), "0 0")
    return int(line.split()[1])


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (a brain or node process would count too)."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _parent(int(entry)) == pid:
            found += [int(entry), *_children(int(entry))]
    return found


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])
