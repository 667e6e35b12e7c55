"""The secrets of a real `parley serve` and of a real `parley node join`, tried from a command
brain as an attacker would: every process's command line and environment in /proc, every file of
the data folder, the process's working folder, $HOME and the system's temporary folder. None of
the secrets given to the process (in its environment, its parley.toml, its data folder, a
credentials file it hides) is found.

The brain writes everything it read into its workspace, where the test reads it: a run's output
has keys and tokens redacted, which would hide a leak from the assertions."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import make_url

from bench.machines import HEARTBEAT, Machines, until
from bench.ports import free_port
from parley.brains.confinement import landlock_abi
from tests.cli.test_serve import serving
from tests.conftest import database_of_its_own
from tests.nats_server import running_nats_config
from tests.runs.test_serve_brains import _hire, _token
from tests.runs.test_serve_restart import _api

NO_SECRET = {"server-url", "server.lock"}

PROBE = """
import json, os, pathlib, sys

sys.stdin.read()
me = os.getpid()
found = {"me": me, "cmdline": {}, "environ": {}, "files": {}, "refused": {}}

def read(path, into, limit=1 << 20):
    try:
        with open(path, "rb") as file:
            into[str(path)] = file.read(limit).decode(errors="replace")
    except OSError as error:
        found["refused"][str(path)] = type(error).__name__

for entry in os.listdir("/proc"):
    if entry.isdigit():
        read(f"/proc/{entry}/cmdline", found["cmdline"])
        read(f"/proc/{entry}/environ", found["environ"])

def walk(root, depth):
    for folder, folders, files in os.walk(root, onerror=lambda e: found["refused"].update(
            {str(e.filename): type(e).__name__})):
        if folder.count(os.sep) - root.count(os.sep) >= depth:
            folders.clear()
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path) and os.path.isfile(path):
                read(path, found["files"])

for root, depth in ((DATA, 99), (WORKDIR, 99), (os.environ["HOME"], 99), ("/tmp", 2)):
    walk(root, depth)
status = pathlib.Path("/proc/self/status").read_text()
found["capabilities"] = status.split("CapEff:")[1].split()[0]
pathlib.Path("found.json").write_text(json.dumps(found))
print(f"read {len(found['cmdline'])} command lines and {len(found['files'])} files")
"""


@pytest.fixture
def confined() -> None:
    if landlock_abi() < 1:
        reason = "this kernel offers no Landlock: command brains cannot be confined here"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: the brains' confinement must be tested)")
        pytest.skip(reason)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> Iterator[tuple[str, str] | None]:
    """None (SQLite in the data folder), or a PostgreSQL URL with a password in it (the
    machine's PostgreSQL trusts local connections: the password is carried, not checked), and
    that password."""
    if request.param == "sqlite":
        yield None
        return
    with database_of_its_own("secrets") as url:
        password = "pw" + secrets.token_hex(12)
        with_password = make_url(url).set(password=password)
        yield with_password.render_as_string(hide_password=False), password


def _planted(workdir: Path, home: Path) -> tuple[dict[str, str], Path, dict[str, str]]:
    """Secrets for a process started in ``workdir`` with ``home``: model keys and a stand-in
    for a node's credentials in its environment, a key in its ``parley.toml``, a credentials
    file in ``home`` it hides from brains. Returns them by name, that file, the environment."""
    given = {
        "PARLEY_OPENAI_API_KEY": "sk-" + secrets.token_hex(16),
        "PARLEY_NODE_CREDENTIALS": "SUA" + secrets.token_hex(20).upper(),
        "toml": "sk-ant-" + secrets.token_hex(16),
        "file": "SUA" + secrets.token_hex(20).upper(),
    }
    credentials = home / ".config" / "parley" / "node.creds"
    credentials.parent.mkdir(parents=True)
    credentials.write_text(f"-----BEGIN USER NKEY SEED-----\n{given['file']}\n")
    credentials.chmod(0o600)
    (workdir / "parley.toml").write_text(f'anthropic_api_key = "{given["toml"]}"\n')
    environment = {
        "HOME": str(home),
        "LC_ALL": "C.UTF-8",
        "PARLEY_OPENAI_API_KEY": given["PARLEY_OPENAI_API_KEY"],
        "PARLEY_NODE_CREDENTIALS": given["PARLEY_NODE_CREDENTIALS"],
        "PARLEY_HIDDEN_FROM_BRAINS": json.dumps([str(credentials)]),
    }
    return given, credentials, environment


def test_a_brain_finds_none_of_the_server_s_secrets_wherever_it_looks(
    tmp_path: Path, confined: None, database: tuple[str, str] | None
) -> None:
    given, credentials, environment = _planted(tmp_path, tmp_path / "home")
    if database is not None:
        environment["PARLEY_DATABASE_URL"], given["database password"] = database
    port = free_port()
    data = (tmp_path / "parley-data").resolve()
    program = tmp_path / "probe.py"
    program.write_text(f"DATA = {str(data)!r}\nWORKDIR = {str(tmp_path.resolve())!r}\n" + PROBE)
    with serving(tmp_path, port, environment) as server:
        token = _token(tmp_path)
        given |= _private_tokens(data) | {"owner token": token}
        with _api(port, token) as api:
            workspace = Path(_hire(api, "prober", program)["workspace"])
            run_id = api.post("/conversations/prober/messages", json={"text": "go"}).json()[
                "run_id"
            ]
            assert until(lambda: _run(api, run_id)["state"] not in ("queued", "running"), 60)
            run = _run(api, run_id)
    assert run["state"] == "finished", run
    found: dict[str, Any] = json.loads((workspace / "found.json").read_text())
    hidden = (data / "private" / "owner-token", tmp_path / "parley.toml", credentials)
    _found_none(found, run, given, program, server.pid, hidden)


@pytest.mark.parametrize("given_as", ["file", "environment"])
def test_a_brain_on_a_joined_node_finds_none_of_the_node_s_secrets(
    tmp_path: Path, confined: None, given_as: str
) -> None:
    """Its credentials given as the README says: ``--credentials FILE`` (a file in its $HOME,
    which the node hides from its brains by itself) or their text in
    ``PARLEY_NODE_CREDENTIALS``."""
    node_dir = tmp_path / "gpu1"
    node_dir.mkdir()
    given, _, planted = _planted(node_dir, tmp_path / "gpu1-home")
    # Its own credentials instead of the stand-ins; the node hides its file by itself.
    del planted["PARLEY_HIDDEN_FROM_BRAINS"], planted["PARLEY_NODE_CREDENTIALS"]
    del given["file"], given["PARLEY_NODE_CREDENTIALS"]
    data = (node_dir / "parley-data").resolve()
    program = node_dir / "probe.py"  # where the walk finds it
    program.write_text(f"DATA = {str(data)!r}\nWORKDIR = {str(node_dir.resolve())!r}\n" + PROBE)
    kept = tmp_path / "gpu1-home" / ".config" / "parley" / "gpu1.creds"
    with database_of_its_own("secrets_node") as database_url, contextlib.ExitStack() as stack:
        port = free_port()
        broker_url = f"nats://127.0.0.1:{port}"
        machines = Machines(tmp_path, database_url, broker_url)
        try:
            broker = running_nats_config(machines.broker_config(port), port)
            stack.enter_context(broker)
            machines.start_hub()
            creds = machines.credentials("gpu1").read_text()
            given["node credentials"] = creds
            argv = [sys.executable, "-m", "parley", "node", "join", "gpu1"]
            environment = planted | HEARTBEAT | {"PARLEY_BROKER": broker_url}
            if given_as == "file":
                kept.write_text(creds)
                kept.chmod(0o600)
                argv += ["--credentials", str(kept)]
            else:
                environment["PARLEY_NODE_CREDENTIALS"] = creds
            clean = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
            with (tmp_path / "gpu1.log").open("ab") as log:
                node = subprocess.Popen(
                    argv, cwd=node_dir, env=clean | environment, stdout=log, stderr=log
                )
            machines.nodes["gpu1"] = node
            assert until(lambda: machines.node("gpu1")["status"] == "online"), machines.log("gpu1")
            machines.hire("prober", "gpu1", f"command:{sys.executable} {program}")
            asked = machines.api.post("/conversations/prober/messages", json={"text": "go"})
            run_id = asked.json()["run_id"]
            assert until(lambda: _run(machines.api, run_id)["state"] not in ("queued", "running"))
            run = _run(machines.api, run_id)
        finally:
            machines.stop_all()
    assert run["state"] == "finished", (run, machines.log("gpu1"))
    found: dict[str, Any] = json.loads((data / "workspaces" / "prober" / "found.json").read_text())
    hidden = (node_dir / "parley.toml", *([kept] if given_as == "file" else []))
    _found_none(found, run, given, program, node.pid, hidden)


def _found_none(
    found: dict[str, Any],
    run: dict[str, Any],
    given: dict[str, str],
    program: Path,
    holder: int,
    hidden: tuple[Path, ...],
) -> None:
    """The brain ran and looked, was refused the ``holder``'s environment and the ``hidden``
    files, and found none of the ``given`` secrets anywhere."""
    # It ran, and looked: its own command line and environment, the holder's command line, the
    # files it may read; and it was refused the holder's environment and the hidden files.
    me = found["me"]
    assert str(program) in found["cmdline"][f"/proc/{me}/cmdline"]
    assert "PARLEY_RUN_TOKEN=" in found["environ"][f"/proc/{me}/environ"]
    assert "\0parley\0" in found["cmdline"][f"/proc/{holder}/cmdline"]
    assert f"/proc/{holder}/environ" in found["refused"]
    assert str(program) in found["files"]
    for path in hidden:
        assert str(path.resolve()) in found["refused"], path
    if os.geteuid() == 0:
        assert int(found["capabilities"], 16) == 0  # root, but without any capability

    everything = json.dumps(found) + run["output"] + (run.get("stderr") or "")
    leaked = {name for name, secret in given.items() if secret in everything}
    assert leaked == set(), f"the brain read {sorted(leaked)}"


def _run(api: httpx.Client, run_id: int) -> dict[str, Any]:
    run: dict[str, Any] = api.get(f"/runs/{run_id}").json()["run"]
    return run


def _private_tokens(data: Path) -> dict[str, str]:
    """The secrets the data folder's private part holds as text (tokens, keys, credentials,
    wherever beneath it): all but the store, the brains' own records and what is no secret
    (the server's URL and lock)."""
    tokens = {}
    private = data / "private"
    for path in private.rglob("*"):
        skipped = path.name in NO_SECRET or path.name.startswith("parley.db")
        if path.is_file() and not skipped and path.relative_to(private).parts[0] != "brains":
            text = path.read_text(errors="replace").strip()
            if len(text) >= 16:
                tokens[str(path.relative_to(data))] = text
    return tokens
