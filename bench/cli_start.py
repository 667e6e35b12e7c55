"""Start-up time of the CLI, this tree against a reference commit, measured side by side.

    .venv/bin/python bench/cli_start.py                  # against main before the fast start
    .venv/bin/python bench/cli_start.py --reference HEAD~3 --runs 20

The reference is checked out with ``git worktree add`` into a temporary folder and run by the
same interpreter (its tree first on ``PYTHONPATH``), so that both versions meet the same
libraries and the same machine load: their runs alternate. A real server (this tree's) answers
``agent list``. Each time is followed by what it costs above the bare interpreter (the floor,
measured alongside); the target is at most 150 ms above it for every client command. The CPU
time (user and system) says the same more steadily on a machine busy with other work. The last
two lines are what ``parley serve`` and ``parley node join`` load before they start.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ports import free_port
from parley.tls import trusted

TREE = Path(__file__).resolve().parent.parent
FLOOR = ["-c", "pass"]
COMMANDS = {
    "parley --version": ["-m", "parley", "--version"],
    "parley --help": ["-m", "parley", "--help"],
    "parley agent list --help": ["-m", "parley", "agent", "list", "--help"],
    "parley run follow --help": ["-m", "parley", "run", "follow", "--help"],
    "parley say --help": ["-m", "parley", "say", "--help"],
    "parley agent list (real server)": ["-m", "parley", "agent", "list"],
    "parley delivery list (real server)": ["-m", "parley", "delivery", "list"],
    # What a server and a node on a machine of their own load before they do anything.
    "parley serve's modules": ["-c", "import parley.cli.serving, parley.app"],
    "parley node join's modules": ["-c", "import parley.cli.joining"],
}


def main() -> None:
    options = _options()
    reference = options.reference or _before_fast_start()
    with tempfile.TemporaryDirectory(prefix="parley-cli-start-") as scratch:
        home = Path(scratch)
        with _checkout(reference, home / "reference") as old_tree, _server(home) as url:
            print(f"reference {reference[:12]}, this tree {TREE}; median of {options.runs} runs")
            print(f"{'':36} {'wall time':^33} {'CPU time':^33}")
            print(f"{'command':36}" + f" {'reference':>16} {'this tree':>16}" * 2)
            for label, args in COMMANDS.items():
                measured = [(TREE, FLOOR), (old_tree, args), (TREE, args)]
                walls, cpus = _medians(measured, home, url, options.runs)
                shown = [_shown(times[i], times[0]) for times in (walls, cpus) for i in (1, 2)]
                print(f"{label:36}" + "".join(f" {text:>16}" for text in shown))


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", help="commit to compare with (default: before the change)")
    parser.add_argument("--runs", type=int, default=10, help="runs of each command (median)")
    return parser.parse_args()


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(TREE), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _before_fast_start() -> str:
    """The parent of the commit that made client commands fast (and added this file)."""
    added = _git("log", "-n1", "--diff-filter=A", "--format=%H", "--", "bench/cli_start.py")
    return _git("rev-parse", f"{added or 'HEAD'}^")


@contextmanager
def _checkout(revision: str, where: Path) -> Iterator[Path]:
    _git("worktree", "add", "--detach", str(where), revision)
    try:
        yield where
    finally:
        _git("worktree", "remove", "--force", str(where))


@contextmanager
def _server(home: Path) -> Iterator[str]:
    """This tree's server in ``home`` (where the CLI then finds the owner token)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "parley", "serve", "--port", str(port), "--log-level", "error"]
    server = subprocess.Popen(
        args, cwd=home, env=_env(TREE, url), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_for(url)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_for(url: str) -> None:
    for _ in range(600):
        try:
            if httpx.get(f"{url}/healthz", timeout=1, verify=trusted()).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise SystemExit(f"the server did not come up at {url}")


def _env(tree: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    # Both versions are told the URL: the reference may not know how to find it by itself.
    return env | {"PYTHONPATH": str(tree), "PARLEY_URL": url}


Medians = list[float | str]


def _medians(
    commands: list[tuple[Path, list[str]]], home: Path, url: str, runs: int
) -> tuple[Medians, Medians]:
    """Each command's median wall time and CPU time (user and system) in ms, their runs taken
    in turn (so that a change of the machine's load falls on all of them), or how it failed
    (an older version may lack it). On a busy machine the CPU time is the steadier one."""
    walls: list[list[float]] = [[] for _ in commands]
    cpus: list[list[float]] = [[] for _ in commands]
    failed: dict[int, str] = {}
    for _ in range(runs):
        for index, (tree, args) in enumerate(commands):
            started, before = time.perf_counter(), _children_cpu()
            done = subprocess.run(
                [sys.executable, *args], cwd=home, env=_env(tree, url), capture_output=True
            )
            walls[index].append(time.perf_counter() - started)
            cpus[index].append(_children_cpu() - before)
            if done.returncode != 0:
                failed[index] = f"exit {done.returncode}"

    def medians(times: list[list[float]]) -> Medians:
        return [failed.get(i) or statistics.median(t) * 1000 for i, t in enumerate(times)]

    return medians(walls), medians(cpus)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _shown(median: float | str, floor: float | str) -> str:
    if isinstance(median, str) or isinstance(floor, str):
        return str(median)
    return f"{median:.0f} ms (+{median - floor:.0f})"


if __name__ == "__main__":
    main()
