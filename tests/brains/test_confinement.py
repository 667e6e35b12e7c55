"""What a command brain's process can see and reach, against real processes and the kernel's
Landlock: an allow-listed environment, hidden paths unreachable by any path, read-only ones
unchangeable, and nothing it started left behind when its turn ends."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import shlex
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.brains import groups
from parley.brains.command import CommandBrain
from parley.brains.confinement import ProcessPolicy, hiding_from_brains, node_policy
from parley.datafolder import DataFolder
from parley.settings import Settings
from tests.brains.test_command_brain import (
    Chunks,
    NoActions,
    all_gone,
    make_turn,
    read_pids,
    script,
    think,
)
from tests.support import eventually


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


SERVER_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/home/parley",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",  # set, so that no interpreter adds an LC_CTYPE of its own
    "TZ": "Europe/Paris",
    "OPENAI_API_KEY": "sk-server-secret",
    "PARLEY_DATABASE_URL": "postgresql://parley:hunter2@db/parley",
    "PARLEY_TOKEN": "pk_owner_secret",
    "DATABASE_URL": "postgresql://app:hunter2@db/app",
}


async def test_the_process_gets_the_allow_list_the_declared_variables_and_the_run_s(
    tmp_path: Path, workspace: Path
) -> None:
    dump = script(tmp_path, "import json, os; print(json.dumps(dict(os.environ)))")
    policy = ProcessPolicy(server_environment=SERVER_ENVIRONMENT, parley_bin=Path("/opt/p/bin"))
    turn = dataclasses.replace(make_turn(workspace), env={"APP_KEY": "given"})
    reply, _ = await think(CommandBrain(dump, policy=policy), turn)
    seen = json.loads(reply)
    seen.pop("PARLEY_SESSION_FILE")
    assert Path(seen.pop("TMPDIR")).name.startswith("parley-run-")  # the turn's own, gone now
    assert seen == {
        "PATH": "/opt/p/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/home/parley",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "Europe/Paris",
        "APP_KEY": "given",
        "PARLEY_URL": "http://127.0.0.1:8765",
        "PARLEY_RUN_TOKEN": "run-token-123",
        "PARLEY_RUN_ID": "7",
        "PARLEY_AGENT": "ada",
        "PARLEY_BRAIN_SESSION": "",
    }


async def test_a_detached_descendant_is_ended_with_the_turn(
    tmp_path: Path, workspace: Path
) -> None:
    pid_file = tmp_path / "pids"
    detacher = script(
        tmp_path,
        f"""
        import os, subprocess, sys
        # A new session, out of the brain's process group, holding none of its pipes.
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open({str(pid_file)!r}, "w") as f:
            f.write(f"{{child.pid}}\\n")
        print("done")
        """,
    )
    reply, _ = await think(CommandBrain(detacher), make_turn(workspace))
    assert reply == "done"
    assert await all_gone(await read_pids(pid_file))


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """A data folder with a secret in its private part, a workspace, and an installation."""
    data = tmp_path / "data"
    paths = {
        "private": data / "private",
        "workspace": data / "workspaces" / "ada",
        "installation": tmp_path / "installation",
    }
    for path in paths.values():
        path.mkdir(parents=True)
    (paths["private"] / "owner-token").write_text("pk_the_owner_token\n")
    (paths["installation"] / "code.py").write_text("print('the server')\n")
    yield paths


PROBE = """
import json, os, pathlib

results = {}

def attempt(name, action):
    try:
        results[name] = repr(action())
    except OSError as error:
        results[name] = type(error).__name__

private = pathlib.Path(PRIVATE)
token = private / "owner-token"
attempt("relative", lambda: pathlib.Path("../../private/owner-token").read_text())
attempt("absolute", lambda: token.read_text())
attempt("dot-dot from root", lambda: pathlib.Path("/.." + str(token)).read_text())
os.symlink(token, "link")
attempt("symlink", lambda: pathlib.Path("link").read_text())
attempt("hard link", lambda: os.link(token, "hard"))
attempt("rename the folder", lambda: os.rename(private, private.parent / "taken"))
attempt("write", lambda: token.write_text("mine"))
attempt("new file", lambda: (private / "planted").write_text("x"))
attempt("parent environ", lambda: open(f"/proc/{HOST}/environ", "rb").read())
attempt("parent root", lambda: pathlib.Path(f"/proc/{HOST}/root{token}").read_text())
attempt("parent cwd", lambda: os.listdir(f"/proc/{HOST}/cwd"))
attempt("run installed code", lambda: pathlib.Path(INSTALLED).read_text())
attempt("change installed code", lambda: pathlib.Path(INSTALLED).write_text("evil"))
attempt("add installed code", lambda: (pathlib.Path(INSTALLED).parent / "x.py").write_text(""))
attempt("own workspace", lambda: pathlib.Path("notes").write_text("mine"))
print(json.dumps(results))
"""


async def test_hidden_paths_are_unreachable_and_read_only_ones_unchangeable(
    tmp_path: Path, layout: dict[str, Path]
) -> None:
    installed = layout["installation"] / "code.py"
    probe = script(
        tmp_path,
        f"PRIVATE = {str(layout['private'])!r}\nHOST = {os.getpid()}\n"
        f"INSTALLED = {str(installed)!r}\n" + PROBE,
    )
    policy = ProcessPolicy(hidden=(layout["private"],), read_only=(layout["installation"],))
    reply, _ = await think(CommandBrain(probe, policy=policy), make_turn(layout["workspace"]))
    assert json.loads(reply) == {
        "relative": "PermissionError",
        "absolute": "PermissionError",
        "dot-dot from root": "PermissionError",
        "symlink": "PermissionError",
        "hard link": "OSError",  # EXDEV: nothing may be linked out of a hidden folder
        "rename the folder": "PermissionError",
        "write": "PermissionError",
        "new file": "PermissionError",
        "parent environ": "PermissionError",
        "parent root": "PermissionError",
        "parent cwd": "PermissionError",
        "run installed code": repr("print('the server')\n"),
        "change installed code": "PermissionError",
        "add installed code": "PermissionError",
        "own workspace": "4",
    }
    assert (layout["private"] / "owner-token").read_text() == "pk_the_owner_token\n"
    assert installed.read_text() == "print('the server')\n"


async def test_unconfined_brains_reach_what_confined_ones_cannot(
    tmp_path: Path, layout: dict[str, Path]
) -> None:
    """confine_brains = false, for kernels without Landlock: the environment stays an
    allow-list and the launcher still ends what the brain started, but paths are open."""
    reader = script(tmp_path, f"print(open({str(layout['private'] / 'owner-token')!r}).read())")
    policy = ProcessPolicy(confine=False, hidden=(layout["private"],))
    reply, _ = await think(CommandBrain(reader, policy=policy), make_turn(layout["workspace"]))
    assert reply == "pk_the_owner_token"


async def test_a_node_hides_the_paths_its_settings_name_and_its_credentials_file(
    tmp_path: Path,
) -> None:
    """``hidden_from_brains`` (~/.ssh, say) and a file the node read a secret from, wherever
    they are: outside the data folder, the data folder's rules do not cover them."""
    keys = tmp_path / "home" / ".ssh"
    keys.mkdir(parents=True)
    (keys / "id_ed25519").write_text("ssh private key\n")
    credentials = tmp_path / "etc" / "node.creds"
    credentials.parent.mkdir()
    credentials.write_text("node credentials\n")
    open_file = tmp_path / "open.txt"
    open_file.write_text("an open file\n")
    settings = hiding_from_brains(
        Settings(data_dir=tmp_path / "data", hidden_from_brains=(keys,)), credentials
    )
    folder = DataFolder(settings.data_dir)
    folder.prepare(default_store=False)
    workspace = folder.workspaces / "ada"
    workspace.mkdir(parents=True)
    paths = [str(keys / "id_ed25519"), str(credentials), str(open_file)]
    reader = script(
        tmp_path,
        f"""
        import pathlib
        for path in {paths!r}:
            try:
                print(pathlib.Path(path).read_text().strip())
            except OSError as error:
                print(type(error).__name__)
        """,
    )
    policy = node_policy(settings)
    reply, _ = await think(CommandBrain(reader, policy=policy), make_turn(workspace))
    assert reply.splitlines() == ["PermissionError", "PermissionError", "an open file"]
    assert settings.hidden_from_brains == (keys, credentials.resolve())


async def test_a_brain_dies_with_its_launcher_even_when_the_launcher_is_killed(
    tmp_path: Path,
) -> None:
    """asyncio kills the launcher alone (SIGKILL, which it cannot answer) when a start is
    cancelled before the pipes are joined, as in a stdio MCP server's start by its library: the
    brain it had started must not run on, orphaned."""
    marker = tmp_path / "brain"
    brain = script(
        tmp_path,
        f"""
        import os, pathlib, time
        pathlib.Path({str(marker)!r}).write_text(f"{{os.getpid()}}\\n")
        time.sleep(60)
        """,
    )
    argv = ProcessPolicy(confine=False).launcher_argv(shlex.split(brain))
    launcher = await asyncio.create_subprocess_exec(*argv, start_new_session=True)
    try:
        [pid] = await read_pids(marker)
        launcher.kill()
        assert await launcher.wait() == -9
        assert await all_gone([pid])
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(launcher.pid, signal.SIGKILL)


def _sleeping_group(env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"], start_new_session=True, env=env)


def test_a_node_ends_what_its_previous_life_left_and_only_that(tmp_path: Path) -> None:
    left, reused, rebooted = _sleeping_group(), _sleeping_group(), _sleeping_group()
    # Left its group, kept its run's token; and one of another run that was never recorded.
    stray = _sleeping_group({"PARLEY_RUN_TOKEN": "pr_token_of_run_1"})
    other = _sleeping_group({"PARLEY_RUN_TOKEN": "pr_token_of_run_9"})
    processes = (left, reused, rebooted, stray, other)
    try:
        groups.record(tmp_path, 1, left.pid, "pr_token_of_run_1")
        # The same pid, but a later process: the recorded group ended and its pid was reused.
        record = groups.record(tmp_path, 2, reused.pid, "pr_token_of_run_2")
        assert record is not None
        noted = json.loads(record.read_text())
        record.write_text(json.dumps({**noted, "started": noted["started"] - 1}))
        record = groups.record(tmp_path, 3, rebooted.pid, "pr_token_of_run_9")
        assert record is not None
        record.write_text(json.dumps({**json.loads(record.read_text()), "boot": "another"}))

        assert groups.end_leftovers(tmp_path) == 2

        assert left.wait(timeout=10) == stray.wait(timeout=10) == -9
        assert all(process.poll() is None for process in (reused, rebooted, other))
        assert list(tmp_path.glob("run-*.json")) == []
    finally:
        for process in processes:
            process.kill()
            process.wait()


ORDINARY = """
out() { echo "$1=$2"; }
try() { name=$1; shift; if "$@" >/dev/null 2>&1; then out "$name" ok; else out "$name" failed; fi; }
try mktemp sh -c 'f=$(mktemp) && echo x > "$f"'
try mktemp-d sh -c 'd=$(mktemp -d) && echo y > "$d/f"'
try home-folder sh -c 'mkdir -p "$HOME/.cache/tool" && echo z > "$HOME/.cache/tool/state"'
try home-file sh -c 'echo more >> "$HOME/.toolrc"'
try workspace sh -c 'echo w > notes && mkdir -p build && echo o > build/out'
try token cat "$DATA/private/owner-token"
try other-run cat "$DATA/tmp/run-other/left"
echo "tmpdir=$TMPDIR"
"""


@pytest.mark.parametrize("under", ["system-temp", "home"])
async def test_ordinary_programs_work_confined_with_the_data_folder_under(
    tmp_path: Path, under: str
) -> None:
    """mktemp, a tool's folder in $HOME, the workspace: with the data folder in the system's
    temporary folder (every folder above it closed to new entries) or in $HOME. The turn's
    TMPDIR is its own, and gone after the turn."""
    home = tmp_path / "home"
    data = home / "parley-data" if under == "home" else tmp_path / "data"
    (home / ".cache").mkdir(parents=True)
    (home / ".toolrc").write_text("set\n")
    settings = Settings(data_dir=data)
    folder = DataFolder(data)
    folder.prepare(default_store=True)
    folder.owner_token.write_text("pk_the_owner_token\n")
    (folder.run_temp / "run-other").mkdir()
    (folder.run_temp / "run-other" / "left").write_text("another turn's\n")
    workspace = folder.workspaces / "ada"
    workspace.mkdir(parents=True)
    environment = {"PATH": os.environ["PATH"], "HOME": str(home)}
    policy = dataclasses.replace(node_policy(settings), server_environment=environment)
    turn = dataclasses.replace(make_turn(workspace), env={"DATA": str(data)})
    program = tmp_path / "ordinary.sh"
    program.write_text(ORDINARY)
    reply, _ = await think(CommandBrain(f"sh {program}", policy=policy), turn)
    seen = dict(line.split("=", 1) for line in reply.splitlines())
    tmpdir = Path(seen.pop("tmpdir"))
    assert seen == {
        "mktemp": "ok",
        "mktemp-d": "ok",
        "home-folder": "ok",
        "home-file": "ok",
        "workspace": "ok",
        "token": "failed",
        "other-run": "failed",
    }
    assert tmpdir.parent == folder.run_temp.resolve()
    assert not tmpdir.exists()
    assert (home / ".cache" / "tool" / "state").read_text() == "z\n"
    assert (workspace / "build" / "out").read_text() == "o\n"


async def test_a_stopped_turn_s_temporary_folder_goes_with_it(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path / "data")
    folder.prepare(default_store=False)
    workspace = folder.workspaces / "ada"
    workspace.mkdir(parents=True)
    policy = node_policy(Settings(data_dir=folder.root))
    waiter = script(
        tmp_path,
        """
        import os, pathlib, time
        (pathlib.Path(os.environ["TMPDIR"]) / "scratch").write_text("x")
        print("started", flush=True)
        time.sleep(60)
        """,
    )
    chunks = Chunks()
    thinking = asyncio.create_task(
        CommandBrain(waiter, policy=policy).think(make_turn(workspace), NoActions(), chunks)
    )

    async def started() -> bool:
        return "started" in "".join(chunks.pieces)

    assert await eventually(started)
    assert [p.name for p in folder.run_temp.glob("run-*/scratch")] == ["scratch"]
    thinking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await thinking
    assert list(folder.run_temp.iterdir()) == []


def test_a_node_removes_the_temporary_folders_its_killed_life_left(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path / "data")
    folder.prepare(default_store=False)
    (folder.run_temp / "run-left").mkdir()
    (folder.run_temp / "run-left" / "big").write_text("x" * 1000)
    folder.clear_run_temp()
    assert folder.run_temp.is_dir() and list(folder.run_temp.iterdir()) == []
