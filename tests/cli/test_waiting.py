"""Waiting through the real CLI, run as a process: streaming, the spinner on a terminal only,
Ctrl-C and /stop stopping the run, task create --wait and run follow."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from tests.cli.test_runtime_commands import hire, ok, ok_items, ok_json, run, until
from tests.served import Served

# Prints a first line, then holds the turn until the test creates "go-on" in its workspace; it
# writes its pid first, so the test can tell that a stop ended it.
SLOW = """
import os, pathlib, sys, time
pathlib.Path("brain.pid").write_text(str(os.getpid()))
print("first part", flush=True)
for _ in range(1200):
    if pathlib.Path("go-on").exists():
        break
    time.sleep(0.05)
print("second part", flush=True)
"""
WITHIN = 60.0


def _hear_ctrl_c() -> None:
    """A suite started in the background (``cmd &`` without job control) ignores SIGINT, and a
    child inherits that: the CLI under test must hear Ctrl-C as a person's terminal sends it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Cli:
    """``python -m parley …`` with its output collected as it comes (from a pipe or a pty)."""

    def __init__(self, served: Served, *args: str, tty: bool = False, stdin: Any = None) -> None:
        env = os.environ | {"PARLEY_URL": served.url, "PARLEY_TOKEN": served.owner_token}
        env |= {"TERM": "xterm", "COLUMNS": "100", "LINES": "30"}
        command = [sys.executable, "-m", "parley", *args]
        self.chunks: list[bytes] = []
        if tty:
            master, slave = pty.openpty()
            self.process = subprocess.Popen(
                command,
                stdin=stdin,
                stdout=slave,
                stderr=subprocess.PIPE,
                env=env,
                preexec_fn=_hear_ctrl_c,
            )
            os.close(slave)
            self._reader = threading.Thread(target=self._drain_pty, args=(master,))
        else:
            self.process = subprocess.Popen(
                command,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                preexec_fn=_hear_ctrl_c,
            )
            assert self.process.stdout is not None
            self._reader = threading.Thread(target=self._drain, args=(self.process.stdout,))
        self._reader.start()

    @property
    def output(self) -> str:
        return b"".join(self.chunks).decode(errors="replace")

    def finish(self) -> tuple[int, str, str]:
        code = self.process.wait(timeout=WITHIN)
        self._reader.join(timeout=WITHIN)
        assert self.process.stderr is not None
        stderr = self.process.stderr.read().decode()
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return code, self.output, stderr

    def _drain(self, pipe: IO[bytes]) -> None:
        while chunk := pipe.read1(4096):  # type: ignore[attr-defined]
            self.chunks.append(chunk)

    def _drain_pty(self, master: int) -> None:
        try:
            while chunk := os.read(master, 4096):
                self.chunks.append(chunk)
        except OSError:  # EIO: the other side closed
            pass
        finally:
            os.close(master)


def hire_slow(served: Served, tmp_path: Path, name: str = "slow") -> Path:
    program = tmp_path / "slow.py"
    program.write_text(SLOW)
    brain = f"command:{sys.executable} {program}"
    hired = ok_json(served, "agent", "hire", name, "--node", "local", "--brain", brain)
    return Path(hired["workspace"])


def running_run(served: Served, agent: str) -> int:
    rows = until(
        lambda: ok_items(served, "run", "list", "--agent", agent, "--state", "running"), WITHIN
    )
    return int(rows[0]["id"])


def run_state(served: Served, run_id: int) -> str:
    state: str = ok_json(served, "run", "show", str(run_id))["run"]["state"]
    return state


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_say_streams_the_reply_before_the_run_ends(served: Served, tmp_path: Path) -> None:
    workspace = hire_slow(served, tmp_path)
    cli = Cli(served, "say", "slow", "tell me")
    until(lambda: "first part" in cli.output, WITHIN)
    run_id = running_run(served, "slow")
    assert run_state(served, run_id) == "running"  # the first part came while it still ran
    (workspace / "go-on").touch()
    code, out, _ = cli.finish()
    assert code == 0
    assert out == "first part\nsecond part\n"  # no spinner, no control characters


def test_say_shows_a_spinner_with_the_run_only_on_a_terminal(
    served: Served, tmp_path: Path
) -> None:
    workspace = hire_slow(served, tmp_path)
    (workspace / "go-on").touch()  # it answers at once: the spinner shows until the reply
    cli = Cli(served, "say", "slow", "tell me", tty=True)
    code, out, _ = cli.finish()
    assert code == 0
    run_id = ok_items(served, "run", "list", "--agent", "slow")[0]["id"]
    assert f"run {run_id}" in out
    assert "\x1b" in out and out.endswith("first part\r\nsecond part\r\n")


def test_ctrl_c_during_say_stops_the_run_and_exits_130(served: Served, tmp_path: Path) -> None:
    workspace = hire_slow(served, tmp_path)
    cli = Cli(served, "say", "slow", "tell me")
    until(lambda: "first part" in cli.output, WITHIN)
    run_id = running_run(served, "slow")
    pid = int((workspace / "brain.pid").read_text())
    cli.process.send_signal(signal.SIGINT)
    code, out, err = cli.finish()
    assert code == 130
    assert out.startswith("first part\n")
    assert err == f"stopped run {run_id}\n"
    assert run_state(served, run_id) == "stopped"
    until(lambda: gone(pid), WITHIN)


def test_a_second_ctrl_c_leaves_at_once(served: Served, tmp_path: Path) -> None:
    hire_slow(served, tmp_path)
    cli = Cli(served, "say", "slow", "tell me")
    until(lambda: "first part" in cli.output, WITHIN)
    run_id = running_run(served, "slow")
    # Two interrupts: either the stop was sent before the second came, or the second left.
    cli.process.send_signal(signal.SIGINT)
    cli.process.send_signal(signal.SIGINT)
    code, _, err = cli.finish()
    assert code == 130, err
    assert err in (f"stopped run {run_id}\n", f"left without stopping run {run_id}\n")
    assert "Traceback" not in err


def test_ctrl_c_during_chat_stops_the_run(served: Served, tmp_path: Path) -> None:
    hire_slow(served, tmp_path)
    cli = Cli(served, "chat", "slow", stdin=subprocess.PIPE)
    assert cli.process.stdin is not None
    cli.process.stdin.write(b"tell me\n")
    cli.process.stdin.flush()
    until(lambda: "first part" in cli.output, WITHIN)
    run_id = running_run(served, "slow")
    cli.process.send_signal(signal.SIGINT)
    code, _, err = cli.finish()
    assert (code, err) == (130, f"stopped run {run_id}\n")
    assert run_state(served, run_id) == "stopped"


def test_stop_typed_in_chat_while_a_reply_streams(served: Served, tmp_path: Path) -> None:
    workspace = hire_slow(served, tmp_path)
    cli = Cli(served, "chat", "slow", stdin=subprocess.PIPE)
    assert cli.process.stdin is not None
    cli.process.stdin.write(b"tell me\n")
    cli.process.stdin.flush()
    until(lambda: "first part" in cli.output, WITHIN)
    run_id = running_run(served, "slow")
    pid = int((workspace / "brain.pid").read_text())
    cli.process.stdin.write(b"/stop\n")
    cli.process.stdin.flush()
    stopped = "(stopped: stopped by owner; what it had said so far is kept)"
    until(lambda: stopped in cli.output, WITHIN)
    assert run_state(served, run_id) == "stopped"
    until(lambda: gone(pid), WITHIN)
    cli.process.stdin.close()
    code, out, _ = cli.finish()
    assert code == 0
    assert out == f"you> slow> first part\n\n{stopped}\nyou> \n"
    # And it is: on the run, marked.
    run = until(
        lambda: (r := ok_json(served, "run", "show", str(run_id))["run"])["output"] and r, WITHIN
    )
    assert (run["output"], run["cut_short"]) == ("first part", True)


def test_task_create_wait_prints_the_result(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "worker", "otherwise:\n  - complete: 'summed: {text}'\n")
    assert ok(served, "task", "create", "worker", "the column", "--wait") == "summed: the column\n"
    task = ok_json(served, "task", "create", "worker", "again", "--wait")
    assert (task["status"], task["result"]) == ("done", "summed: again")


def test_task_create_wait_on_a_failed_task_exits_7(served: Served, tmp_path: Path) -> None:
    hire(
        served,
        tmp_path,
        "quitter",
        "otherwise:\n  - complete: {result: 'no spoons', failed: true}\n",
    )
    cli = Cli(served, "task", "create", "quitter", "count the spoons", "--wait")
    code, out, err = cli.finish()
    assert (code, out) == (7, "no spoons\n")
    assert "failed: no spoons" in err


def test_task_create_wait_on_a_cancelled_task_exits_4(served: Served, tmp_path: Path) -> None:
    workspace = hire_slow(served, tmp_path)
    cli = Cli(served, "task", "create", "slow", "nap", "--wait")
    task_id = until(lambda: ok_items(served, "task", "list"), WITHIN)[0]["id"]
    running_run(served, "slow")
    ok(served, "task", "cancel", str(task_id))
    code, _, err = cli.finish()
    assert code == 4 and f"task {task_id} was cancelled" in err
    (workspace / "go-on").touch()


def test_ctrl_c_while_waiting_on_a_task_leaves_it_going(served: Served, tmp_path: Path) -> None:
    workspace = hire_slow(served, tmp_path)
    cli = Cli(served, "task", "create", "slow", "nap", "--wait")
    run_id = running_run(served, "slow")
    task_id = ok_items(served, "task", "list")[0]["id"]
    cli.process.send_signal(signal.SIGINT)
    code, _, err = cli.finish()
    assert code == 130 and f"task {task_id} goes on" in err
    assert run_state(served, run_id) == "running"
    (workspace / "go-on").touch()


def test_run_follow_a_running_then_a_finished_run(served: Served, tmp_path: Path) -> None:
    workspace = hire_slow(served, tmp_path)
    ok(served, "task", "create", "slow", "work")
    run_id = str(running_run(served, "slow"))
    cli = Cli(served, "run", "follow", run_id)
    until(lambda: "first part" in cli.output, WITHIN)  # what came before it followed
    (workspace / "go-on").touch()
    code, out, err = cli.finish()
    assert (code, out, err) == (0, "first part\nsecond part\n", f"run {run_id} finished\n")
    again = run(served, "run", "follow", run_id)
    assert (again.exit_code, again.stdout) == (0, "first part\nsecond part\n")
    assert ok_json(served, "run", "follow", run_id)["reply"] == "first part\nsecond part"


def test_run_follow_refuses_someone_elses_run(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "echo", "otherwise:\n  - reply: 'private'\n")
    run_id = str(ok_json(served, "say", "echo", "a secret")["run"])
    member = ok_json(served, "person", "add", "ada", "--member")["token"]
    refused = run(served, "run", "follow", run_id, PARLEY_TOKEN=member)
    assert refused.exit_code == 3
    assert refused.stderr == f"error: no run {run_id}\n"
