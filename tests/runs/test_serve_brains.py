"""Command brains under a real `parley serve`: what they can see and reach (a brain's
authority is its run token, nothing more), and that none outlives the server that hosts it."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.ports import free_port
from tests.cli.test_serve import serving
from tests.runs.test_serve_restart import _api
from tests.support import until

SECRETS = {
    "OPENAI_API_KEY": "sk-env-openai-secret",
    "PARLEY_OPENAI_API_KEY": "sk-env-parley-openai-secret",
    "PARLEY_ANTHROPIC_API_KEY": "sk-env-parley-anthropic-secret",
    "DATABASE_URL": "postgresql://app:env-db-password@db/app",
    "AWS_SECRET_ACCESS_KEY": "env-aws-secret",
    "APP_REGION": "eu-west-3",  # declared for the agent below: it may see this one
}
RUN_VARIABLES = {
    "PARLEY_URL", "PARLEY_RUN_TOKEN", "PARLEY_RUN_ID", "PARLEY_AGENT", "PARLEY_BRAIN_SESSION",
    "PARLEY_SESSION_FILE", "TMPDIR",
}  # fmt: skip

PROBE = """
import json, os, pathlib, sys

sys.stdin.read()
attempts = {}

def attempt(name, action):
    try:
        attempts[name] = repr(action())[:200]
    except OSError as error:
        attempts[name] = type(error).__name__

def read(path):
    return lambda: pathlib.Path(path).read_bytes()

data = pathlib.Path(DATA)
for name in ("owner-token", "parley.db", "parley.db-wal"):
    attempt("relative " + name, read("../../private/" + name))
    attempt("absolute " + name, read(data / "private" / name))
attempt("older layout", read("../../owner-token"))
attempt("configuration file", read(CONFIG))
os.symlink(data / "private", "door")
attempt("through a symlink", read("door/owner-token"))
attempt("server's environment", read(f"/proc/{SERVER}/environ"))
attempt("server's memory", read(f"/proc/{SERVER}/mem"))
try:
    fds = os.listdir(f"/proc/{SERVER}/fd")
except OSError:
    fds = []  # a non-dumpable server's /proc entries are root's: not even listed (not root)
for fd in fds:  # the store among them: open it again through one
    attempt("server's file " + fd, lambda: open(f"/proc/{SERVER}/fd/{fd}", "rb").read(4096))
attempt("server's root", read(f"/proc/{SERVER}/root{data}/private/owner-token"))
attempt("server's cwd", read(f"/proc/{SERVER}/cwd/parley-data/private/owner-token"))
attempt("signal the server", lambda: os.kill(SERVER, 0))
for device in sorted(pathlib.Path("/dev").iterdir()):
    if device.is_block_device():  # raw disks: as root, every file's bytes are there
        attempt("raw disk " + device.name, lambda: open(device, "rb").read(4096))
print(json.dumps({"environment": dict(os.environ), "attempts": attempts}))
"""

HOLDER = """
import json, os, pathlib, subprocess, sys, time

sys.stdin.read()

def alive(pid):
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"

earlier = [json.loads(p.read_text()) for p in pathlib.Path(".").glob("pids-*.json")]
sleep = [sys.executable, "-c", "import time; time.sleep(120)"]
child = subprocess.Popen(sleep)
detached = subprocess.Popen(
    sleep, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
)
pids = {"launcher": os.getppid(), "brain": os.getpid(), "child": child.pid,
        "detached": detached.pid}
alive_before = [pid for noted in earlier for pid in noted["pids"].values() if alive(pid)]
record = {"pids": pids, "earlier_alive_at_start": alive_before}
pathlib.Path(f"pids-{os.environ['PARLEY_RUN_ID']}.json").write_text(json.dumps(record))
time.sleep(120)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # dead; reaped when its parent gets to it


def _hire(api: httpx.Client, name: str, program: Path, **fields: Any) -> dict[str, Any]:
    body = {"name": name, "node": "local", "brain": f"command:{sys.executable} {program}"}
    hired = api.post("/agents", json=body | fields)
    assert hired.status_code == 201, hired.text
    agent: dict[str, Any] = hired.json()
    return agent


def _token(workdir: Path) -> str:
    return (workdir / "parley-data" / "private" / "owner-token").read_text().strip()


def test_a_brain_sees_none_of_the_server_s_environment_and_cannot_read_its_secrets(
    tmp_path: Path,
) -> None:
    (tmp_path / "parley.toml").write_text('anthropic_base_url = "https://toml-secret.example"\n')
    port = free_port()
    with serving(tmp_path, port, SECRETS | {"LC_ALL": "C.UTF-8"}) as server:
        token = _token(tmp_path)
        data = (tmp_path / "parley-data").resolve()
        program = tmp_path / "probe.py"
        config = (tmp_path / "parley.toml").resolve()
        program.write_text(
            f"DATA = {str(data)!r}\nSERVER = {server.pid}\nCONFIG = {str(config)!r}\n" + PROBE
        )
        with _api(port, token) as api:
            _hire(
                api, "prober", program, env={"APP_KEY": "declared"}, env_from_server=["APP_REGION"]
            )
            run_id = api.post("/conversations/prober/messages", json={"text": "go"}).json()[
                "run_id"
            ]
            assert until(
                lambda: api.get(f"/runs/{run_id}").json()["run"]["state"] != "running", within=20
            )
            run = api.get(f"/runs/{run_id}").json()["run"]
    assert run["state"] == "finished", run
    seen = json.loads(run["output"])
    environment, attempts = seen["environment"], seen["attempts"]

    allowed = {"PATH", "HOME", "LANG", "TZ"}
    given = {n for n in os.environ if n in allowed or n.startswith("LC_")} | {"PATH", "LC_ALL"}
    assert set(environment) == given | RUN_VARIABLES | {"APP_KEY", "APP_REGION"}
    assert environment["APP_REGION"] == "eu-west-3" and environment["APP_KEY"] == "declared"
    assert environment["PATH"].split(":")[0] == str(Path(sys.executable).parent)  # `parley`

    failed = {name: outcome for name, outcome in attempts.items() if "Error" not in outcome}
    assert failed == {}, f"reached: {failed}"
    assert any(name.startswith("raw disk") for name in attempts) or os.geteuid() != 0
    output = run["output"]
    for secret in [token, "toml-secret", *(v for k, v in SECRETS.items() if k != "APP_REGION")]:
        assert secret not in output


@contextmanager
def _killing_at_the_end(pids: list[int]) -> Iterator[None]:
    """Whatever the outcome, no process of this test outlives it."""
    try:
        yield
    finally:
        for pid in pids:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


def _noted(workspace: Path, run_id: int) -> dict[str, Any]:
    path = workspace / f"pids-{run_id}.json"
    assert until(path.exists, within=20), f"run {run_id} never started its brain"
    noted: dict[str, Any] = json.loads(path.read_text())
    return noted


def test_brains_die_with_a_killed_server_and_only_the_re_run_runs_after_restart(
    tmp_path: Path,
) -> None:
    program = tmp_path / "holder.py"
    program.write_text(HOLDER)
    port = free_port()
    pids: list[int] = []
    with _killing_at_the_end(pids):
        with serving(tmp_path, port) as server:
            token = _token(tmp_path)
            with _api(port, token) as api:
                workspace = Path(_hire(api, "worker", program)["workspace"])
                first = api.post("/conversations/worker/messages", json={"text": "hold"}).json()
                pids += _noted(workspace, first["run_id"])["pids"].values()
            server.kill()  # no shutdown of any kind
            server.wait(timeout=10)
            # The launcher's parent-death signal: the brain and all it started, detached too.
            assert until(lambda: all(_gone(pid) for pid in pids), within=20), [
                pid for pid in pids if not _gone(pid)
            ]

        with serving(tmp_path, port), _api(port, token) as api:
            assert api.get(f"/runs/{first['run_id']}").json()["run"]["reason"] == "interrupted"
            rerun = _running_run(api, "worker")
            noted = _noted(workspace, rerun)
            pids += noted["pids"].values()
            assert all(not _gone(pid) for pid in noted["pids"].values())
            assert noted["earlier_alive_at_start"] == []
        assert until(lambda: all(_gone(pid) for pid in pids), within=20)  # a clean stop ends it too


def test_at_start_a_node_kills_the_groups_its_previous_life_left_before_re_running(
    tmp_path: Path,
) -> None:
    program = tmp_path / "holder.py"
    program.write_text(HOLDER)
    port = free_port()
    pids: list[int] = []
    with _killing_at_the_end(pids):
        with serving(tmp_path, port) as server:
            token = _token(tmp_path)
            with _api(port, token) as api:
                workspace = Path(_hire(api, "keeper", program)["workspace"])
                first = api.post("/conversations/keeper/messages", json={"text": "hold"}).json()
                left = _noted(workspace, first["run_id"])["pids"]
                pids += left.values()
            # The launcher dies with the server before it can end anything (stopped, then
            # killed): the brain dies with it (its parent-death signal), but what the brain
            # started is left running, in the group the node recorded.
            os.kill(left["launcher"], signal.SIGSTOP)
            server.kill()
            server.wait(timeout=10)
            os.kill(left["launcher"], signal.SIGKILL)
            assert until(lambda: _gone(left["launcher"]) and _gone(left["brain"]), within=20)
        assert not _gone(left["child"])

        with serving(tmp_path, port), _api(port, token) as api:
            noted = _noted(workspace, _running_run(api, "keeper"))
            pids += noted["pids"].values()
            # Ended before the run was recovered: the re-run never saw them alive.
            assert noted["earlier_alive_at_start"] == []
            assert _gone(left["child"])


def _running_run(api: httpx.Client, agent: str) -> int:
    def running() -> list[dict[str, Any]]:
        runs = api.get("/runs", params={"agent": agent, "state": "running"}).json()["items"]
        return [run for run in runs if run["state"] == "running"]

    assert until(lambda: len(running()) == 1, within=20)
    run_id: int = running()[0]["id"]
    return run_id
