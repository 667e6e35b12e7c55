"""What a turn had said when it was stopped or failed is shown marked as cut short: by `say`,
`run follow` and `run show`; and a turn whose reply was undone with the rest of it says, to the
person who watched it stream, that its reply was not kept."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.cli.test_run_stderr import FAILING, STOPPED, WITHIN, hire_command, last_run, shown
from tests.cli.test_runtime_commands import hire, ok, run, until
from tests.served import Served

# Prints, then holds its turn until stopped (its stdout read once it says so in its workspace:
# the line is flushed before the file is made, and the node reads as the process writes).
SAYS_THEN_WAITS = STOPPED.replace(
    'sys.stderr.write("before the stop\\n")', 'print("half a thought", flush=True)'
)
KEPT = "what it had said so far is kept"
MARKED = "before it finished: the output is what it had said so far"


def test_a_crashed_command_s_output_is_shown_cut_short(served: Served, tmp_path: Path) -> None:
    hire_command(served, tmp_path, "grumpy", FAILING)
    said = run(served, "say", "grumpy", "hello")
    assert said.exit_code == 7
    assert said.stdout == "partial answer\n"
    assert said.stderr.rstrip().endswith(f"; {KEPT}")
    run_id = last_run(served, "grumpy")["id"]
    detail = shown(served, run_id)["run"]
    assert (detail["output"], detail["cut_short"]) == ("partial answer", True)
    text = ok(served, "run", "show", str(run_id))
    assert "\noutput       partial answer\n" in text
    assert (
        "\ncut short    failed before it finished: the output is what it had said so far\n" in text
    )
    followed = run(served, "run", "follow", str(run_id))  # ended already: shown whole, marked
    assert (followed.exit_code, followed.stdout) == (7, "partial answer\n")
    assert followed.stderr.rstrip().endswith(f"; {KEPT}")


def test_a_stopped_turn_s_output_is_shown_cut_short(served: Served, tmp_path: Path) -> None:
    workspace = hire_command(served, tmp_path, "sleepy", SAYS_THEN_WAITS)
    ok(served, "task", "create", "sleepy", "nap")
    until(lambda: (workspace / "wrote").exists(), WITHIN)
    run_id = last_run(served, "sleepy")["id"]
    # Its line reached the hub (the run's live events have it) before it is stopped.
    until(lambda: "half a thought" in _events_so_far(served, run_id), WITHIN)
    assert ok(served, "stop", str(run_id)) == f"stopped run {run_id}\n"
    detail = until(lambda: (d := shown(served, run_id)["run"])["output"] and d, WITHIN)
    assert (detail["state"], detail["output"], detail["cut_short"]) == (
        "stopped",
        "half a thought",
        True,
    )
    text = ok(served, "run", "show", str(run_id))
    assert (
        "\ncut short    stopped before it finished: the output is what it had said so far\n" in text
    )


def test_a_refused_scripted_turn_s_say_tells_its_reply_was_not_kept(
    served: Served, tmp_path: Path
) -> None:
    hire(served, tmp_path, "eager", "otherwise: [{reply: 'on it'}, {send: {to: nobody, text: hi}}]")
    said = run(served, "say", "eager", "please")
    assert said.exit_code == 7
    # What it streamed before the turn was undone, when say was watching by then (a turn this
    # quick may end before say's watch begins: then nothing was seen, and nothing is printed).
    assert said.stdout in ("on it\n", "")
    assert said.stderr.startswith("error: the turn failed: ")
    assert said.stderr.rstrip().endswith("; its reply was not kept")
    assert KEPT not in said.stderr


def _events_so_far(served: Served, run_id: int) -> str:
    """The run's events up to now: a watcher that comes while the run goes gets its chunks so
    far first; read until the first of them."""
    headers = {"Authorization": f"Bearer {served.owner_token}"}
    with httpx.stream(
        "GET", f"{served.url}/api/v1/runs/{run_id}/events", headers=headers, timeout=WITHIN
    ) as response:
        for line in response.iter_lines():
            if '"chunk"' in line:
                return line
    return ""
