"""`parley serve` told to stop by SIGTERM (what systemd and `docker stop` send) shuts down as on
Ctrl-C: a turn's brain is stopped, the store closed, the folder's server address taken back,
and it exits 0. uvicorn raised the signal again once its server stopped, which killed the
process before Parley's own shutdown ran."""

from __future__ import annotations

import signal
from pathlib import Path

from bench.machines import alive
from tests.cli.test_runtime_commands import until
from tests.cli.test_server_killed import WITHIN, hire_command, runs_of, server

# Notes its pid, then holds its turn until stopped.
SLEEPER = """
import os, pathlib, time
pathlib.Path("brain.pid").write_text(str(os.getpid()))
time.sleep(120)
"""


def test_sigterm_stops_a_turn_s_brain_and_closes_the_store(tmp_path: Path) -> None:
    private = tmp_path / "parley-data" / "private"
    with server(tmp_path) as served:
        workspace = hire_command(served, "sleeper", SLEEPER)
        with served.api() as api:
            api.post("/conversations/sleeper/messages", json={"text": "hold on"}).raise_for_status()
        pid = int(until(lambda: _read(workspace / "brain.pid"), within=WITHIN))
        assert alive(pid)
        assert [run["state"] for run in runs_of(served, "sleeper")] == ["running"]
        assert served.process is not None
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=WITHIN) == 0
    assert until(lambda: not alive(pid), within=WITHIN)  # its process group was killed
    # Closed: SQLite folded its log into the database as the last connection went.
    assert not (private / "parley.db-wal").exists()
    assert not (private / "server-url").exists()  # no CLI is sent to a server that is gone
    with server(tmp_path) as again:  # started again: its run is not left running for ever
        offered, ended = runs_of(again, "sleeper")  # newest first
        assert (ended["state"], ended["reason"]) == ("failed", "interrupted")
        assert offered["state"] in ("queued", "running")  # its text goes to a new turn


# Says something, then holds its turn until the server goes.
SAYER = """
import time
print("on my way", flush=True)
time.sleep(120)
"""


def test_a_turn_cut_short_by_sigterm_keeps_what_it_had_said(tmp_path: Path) -> None:
    with server(tmp_path) as served:
        hire_command(served, "sayer", SAYER)
        with served.api() as api:
            queued = api.post("/conversations/sayer/messages", json={"text": "go"}).json()
            # Its line reached the hub (the run's events have it), so its node holds it too.
            with api.stream("GET", f"/runs/{queued['run_id']}/events", timeout=WITHIN) as events:
                assert any('"chunk"' in line for line in events.iter_lines())
        assert served.process is not None
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=WITHIN) == 0
    with server(tmp_path) as again:
        ended = next(run for run in runs_of(again, "sayer") if run["id"] == queued["run_id"])
        assert (ended["state"], ended["reason"]) == ("failed", "interrupted")
        assert (ended["output"], ended["cut_short"]) == ("on my way", True)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""
