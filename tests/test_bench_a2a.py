"""bench/a2a_served.py's smoke test, small and without timing thresholds: it runs as a script,
really sending through Parley's A2A endpoint and a2a-sdk's sample server, and prints a line
per side and concurrency, each with its server's CPU per message, and the best of each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.a2a_served import PARLEY, REFERENCE

ROOT = Path(__file__).parent.parent


def test_the_bench_runs_as_a_script_with_both_sides() -> None:
    # Enough messages that each server's CPU spans several of /proc's 10 ms ticks: six read
    # 0 ms for the sample server on a fast machine.
    command = ["bench/a2a_served.py", "--messages", "40", "--concurrency", "1,2", "--warmup", "1"]
    done = subprocess.run(
        [sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    for side in (PARLEY, REFERENCE):
        lines = [line for line in done.stdout.splitlines() if line.startswith(f"| {side} |")]
        assert [line.split("|")[2].strip() for line in lines] == ["1", "2"]
        assert all(float(line.split("|")[6]) > 0 for line in lines)  # the server's CPU
    (best,) = [line for line in done.stdout.splitlines() if line.startswith("best vs best:")]
    assert best.endswith("x")
