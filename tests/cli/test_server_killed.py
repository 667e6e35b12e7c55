"""The server SIGKILLed while clients wait on it or write through it, then started again on the
same data folder: a waiting CLI leaves with exit 6 and one line, no run stays running, and what
a request changed is there entirely or not at all."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.ports import free_port
from tests.cli.test_runtime_commands import until
from tests.cli.test_serve import cli
from tests.served import PortTaken, _wait_until_healthy

WITHIN = 60.0
UNREACHABLE = 6

# Prints a first line, then holds its turn until stopped (or its server dies).
SLOW = """
import time
print("first part", flush=True)
time.sleep(120)
"""
# Reads its turn's input (by `parley act input`, over and over while it runs), and answers with
# the text it was given.
READS = """
import json, pathlib, subprocess, time
turns = pathlib.Path("turns")
turns.write_text(turns.read_text() + "x" if turns.exists() else "x")
while True:
    done = subprocess.run(["parley", "act", "input", "--json"], capture_output=True, text=True)
    said = [m["text"] for m in json.loads(done.stdout)["said"]]
    if len(turns.read_text()) > 1:
        print(" / ".join(said))
        break
    pathlib.Path("read").write_text(json.dumps(said))
    time.sleep(0.05)
"""


class Server:
    """`parley serve` as a process on the embedded default, in ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        self.workdir, self.port = workdir, free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Serves on its port; on a first start, on another free one if that was taken
        meanwhile (a restart keeps its port: its clients were told it)."""
        first = self.process is None
        for tries_left in reversed(range(3 if first else 1)):
            try:
                return self._serve()
            except PortTaken:
                if not tries_left:
                    raise
                self.port = free_port()

    def _serve(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "parley", "serve", "--port", str(self.port)],
            cwd=self.workdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_until_healthy(f"http://127.0.0.1:{self.port}", process=self.process)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=WITHIN)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=WITHIN)

    def cli(self, *args: str) -> Any:
        """A CLI command that must work; its --json output."""
        done = cli(self.workdir, self.port, *args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def waiting(self, *args: str) -> subprocess.Popen[str]:
        """A CLI command left running, its output read as it comes."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
        return subprocess.Popen(
            [sys.executable, "-m", "parley", *args],
            cwd=self.workdir,
            env=env | {"PARLEY_PORT": str(self.port)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def api(self) -> httpx.Client:
        token = (self.workdir / "parley-data" / "private" / "owner-token").read_text().strip()
        return httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}/api/v1",
            headers={"Authorization": f"Bearer {token}"},
        )


@contextmanager
def server(workdir: Path) -> Iterator[Server]:
    running = Server(workdir)
    running.start()
    try:
        yield running
    finally:
        running.stop()


def hire_command(served: Server, name: str, program: str) -> Path:
    path = served.workdir / f"{name}.py"
    path.write_text(program)
    brain = f"command:{sys.executable} {path}"
    return Path(served.cli("agent", "hire", name, "--node", "local", "--brain", brain)["workspace"])


def runs_of(served: Server, agent: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = served.cli("run", "list", "--agent", agent)["items"]
    return found


def left_unreachable(client: subprocess.Popen[str]) -> str:
    """The waiting CLI's exit: status 6 and one line on stderr, no traceback."""
    _, err = client.communicate(timeout=WITHIN)
    assert client.returncode == UNREACHABLE, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "is 'parley serve'" in err  # what to look at
    return err


def test_say_streaming_when_the_server_is_killed(tmp_path: Path) -> None:
    with server(tmp_path) as served:
        workspace = hire_command(served, "slow", SLOW)
        say = served.waiting("say", "slow", "tell me")
        assert say.stdout is not None
        assert say.stdout.readline() == "first part\n"  # it streams: the run is going
        [running] = runs_of(served, "slow")
        assert running["state"] == "running"
        served.kill()
        err = left_unreachable(say)
        assert f"Parley at http://127.0.0.1:{served.port}" in err
        served.start()  # the same data folder, as a restart after a crash
        again, ended = runs_of(served, "slow")  # newest first
        # Not running for ever: failed as interrupted, its text offered to a new run.
        assert (ended["id"], ended["state"], ended["reason"]) == (
            running["id"],
            "failed",
            "interrupted",
        )
        assert again["state"] in ("queued", "running")
        assert workspace.exists()


def test_task_create_wait_when_the_server_is_killed(tmp_path: Path) -> None:
    with server(tmp_path) as served:
        hire_command(served, "slow", SLOW)
        waiting = served.waiting("task", "create", "slow", "nap", "--wait")
        until(lambda: runs_of(served, "slow"), WITHIN)
        until(lambda: runs_of(served, "slow")[0]["state"] == "running", WITHIN)
        served.kill()
        left_unreachable(waiting)
        served.start()
        [task] = served.cli("task", "list")["items"]
        assert (task["agent"], task["text"], task["status"]) == ("slow", "nap", "open")
        states = {run["state"] for run in runs_of(served, "slow")}
        assert "failed" in states and states <= {"failed", "queued", "running"}


def test_act_input_when_the_server_is_killed(tmp_path: Path) -> None:
    with server(tmp_path) as served:
        workspace = hire_command(served, "reader", READS)
        served.cli("task", "create", "reader", "count the cups")
        until(lambda: (workspace / "read").exists(), WITHIN)  # it is reading, over and over
        served.kill()
        served.start()
        # The interrupted turn's text went to the next run, which reads it whole.
        finished = until(
            lambda: [r for r in runs_of(served, "reader") if r["state"] == "finished"], WITHIN
        )
        assert finished[0]["output"] == "count the cups"
        assert json.loads((workspace / "read").read_text()) == ["count the cups"]


def test_agent_patch_when_the_server_is_killed(tmp_path: Path) -> None:
    with server(tmp_path) as served:
        served.cli("agent", "hire", "scribe", "--node", "local", "--engram", "v0")
        stop = threading.Event()

        def patch_until_stopped() -> None:
            with served.api() as api:
                for n in range(1, 100_000):
                    if stop.is_set():
                        return
                    try:
                        api.patch("/agents/scribe", json={"engram": f"v{n}"})
                    except httpx.TransportError:
                        return

        patching = threading.Thread(target=patch_until_stopped)
        patching.start()
        until(lambda: len(served.cli("agent", "changes", "scribe")["items"]) >= 3, WITHIN)
        served.kill()
        stop.set()
        patching.join(timeout=WITHIN)
        served.start()
        engram = served.cli("agent", "show", "scribe")["engram"]
        changes = served.cli("agent", "changes", "scribe", "--limit", "500")["items"]
        # Each change whole or absent: a chain from v0 to the engram the agent has.
        assert changes[0]["new"] == engram
        assert changes[-1]["old"] == "v0"
        for newer, older in itertools.pairwise(changes):
            assert newer["old"] == older["new"]
