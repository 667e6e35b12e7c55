"""A command brain's stderr is kept on its run however the turn ends, and shown by `run show`
and the API's run detail to whoever may read the run."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx

from tests.cli.test_runtime_commands import hire, ok, ok_items, ok_json, run, until
from tests.served import Served

WITHIN = 60.0

FAILING = """
import os, sys
sys.stderr.write("warming up\\x00\\n")
sys.stderr.write("token " + os.environ["PARLEY_RUN_TOKEN"] + "\\n")
sys.stderr.write("model quota exceeded\\n")
print("partial answer")
sys.exit(3)
"""
# 100 KiB of numbered lines on stderr, then a reply: only the last 64 KiB are kept.
LOUD = """
import sys
for n in range(2048):
    sys.stderr.write(f"line {n:05d} " + "x" * 38 + "\\n")
print("done")
"""
# Writes to stderr, says so in its workspace, then waits to be stopped.
STOPPED = """
import pathlib, sys, time
sys.stderr.write("before the stop\\n")
sys.stderr.flush()
pathlib.Path("wrote").touch()
time.sleep(120)
sys.stderr.write("never written\\n")
"""


def hire_command(served: Served, tmp_path: Path, name: str, program: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(program))
    brain = f"command:{sys.executable} {path}"
    hired = ok_json(served, "agent", "hire", name, "--node", "local", "--brain", brain)
    return Path(hired["workspace"])


def last_run(served: Served, agent: str) -> dict[str, Any]:
    rows = until(lambda: ok_items(served, "run", "list", "--agent", agent), WITHIN)
    return dict(rows[0])


def shown(served: Served, run_id: int, token: str | None = None) -> dict[str, Any]:
    response = httpx.get(
        f"{served.url}/api/v1/runs/{run_id}",
        headers={"Authorization": f"Bearer {token or served.owner_token}"},
    )
    assert response.status_code == 200, response.text
    detail: dict[str, Any] = response.json()
    return detail


def test_a_failed_command_keeps_its_stderr_on_the_run(served: Served, tmp_path: Path) -> None:
    hire_command(served, tmp_path, "grumpy", FAILING)
    said = run(served, "say", "grumpy", "hello")
    assert said.exit_code == 7
    run_id = last_run(served, "grumpy")["id"]
    stderr = shown(served, run_id)["stderr"]
    # NUL dropped, the run token redacted, every line kept.
    assert stderr == "warming up\ntoken prt_[redacted]\nmodel quota exceeded"
    assert ok_json(served, "run", "show", str(run_id))["stderr"] == stderr
    text = ok(served, "run", "show", str(run_id))
    assert text.endswith(f"\nstderr\n{stderr}\n")
    assert "state        failed" in text


def test_only_the_last_64_kib_are_kept_and_it_says_so(served: Served, tmp_path: Path) -> None:
    hire_command(served, tmp_path, "loud", LOUD)
    assert ok(served, "say", "loud", "go") == "done\n"
    stderr = shown(served, last_run(served, "loud")["id"])["stderr"]
    note, _, kept = stderr.partition("\n")
    written = 2048 * 50
    assert note == (
        "[only the last 64 KiB of stderr are kept:"
        f" {written - 64 * 1024} bytes before them were dropped]"
    )
    assert len(kept) == 64 * 1024 - 1  # the last newline is trimmed
    assert kept.endswith("line 02047 " + "x" * 38)
    assert "line 00000" not in kept


def test_a_stopped_turn_keeps_what_it_wrote_before_the_stop(served: Served, tmp_path: Path) -> None:
    workspace = hire_command(served, tmp_path, "sleepy", STOPPED)
    ok(served, "task", "create", "sleepy", "nap")
    until(lambda: (workspace / "wrote").exists(), WITHIN)
    run_id = last_run(served, "sleepy")["id"]
    assert ok(served, "stop", str(run_id)) == f"stopped run {run_id}\n"
    detail = until(lambda: (d := shown(served, run_id))["stderr"] and d, WITHIN)
    assert detail["run"]["state"] == "stopped"
    assert detail["stderr"] == "before the stop"
    assert ok(served, "run", "show", str(run_id)).endswith("\nstderr\nbefore the stop\n")


def test_a_finished_turn_keeps_it_and_other_brains_have_none(
    served: Served, tmp_path: Path
) -> None:
    hire_command(served, tmp_path, "chatty", "import sys; sys.stderr.write('fine\\n'); print('hi')")
    hire(served, tmp_path, "rules", "otherwise:\n  - reply: 'ok'\n")
    assert ok(served, "say", "chatty", "hello") == "hi\n"
    assert ok(served, "say", "rules", "hello") == "ok\n"
    assert shown(served, last_run(served, "chatty")["id"])["stderr"] == "fine"
    scripted = last_run(served, "rules")["id"]
    assert shown(served, scripted)["stderr"] is None
    assert "stderr" not in ok(served, "run", "show", str(scripted))


def test_stderr_is_read_as_the_run_is(served: Served, tmp_path: Path) -> None:
    hire_command(served, tmp_path, "chatty", "import sys; sys.stderr.write('mine\\n')")
    member = ok_json(served, "person", "add", "ada", "--member")["token"]
    ok(served, "say", "chatty", "in the owner's conversation")
    private = last_run(served, "chatty")["id"]
    ok(served, "task", "create", "chatty", "a task members read")
    both = until(
        lambda: len(rows := ok_items(served, "run", "list", "--state", "finished")) == 2 and rows,
        WITHIN,
    )
    shared = both[0]["id"]  # newest first
    assert shared != private
    assert shown(served, shared, member)["stderr"] == "mine"
    refused = run(served, "run", "show", str(private), PARLEY_TOKEN=member)
    assert refused.exit_code == 3 and "mine" not in refused.output
