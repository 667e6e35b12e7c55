"""Benchmark of Parley's runtime: hops through agent conversations, hop latency, stop latency.

Run as ``.venv/bin/python bench/runtime.py`` (see bench/README.md). Parley is started in this
process the way the tests start it (``create_app`` + its lifespan + ``httpx.ASGITransport``),
once per measured phase, on a fresh SQLite file or a fresh PostgreSQL database (vacuumed and
analyzed after the warm-up, as autovacuum would have done by then); on the event
loop ``parley serve`` runs on (uvloop), its modules and what it made to start frozen out of the
garbage collector's full passes as the server freezes them, unless ``--loop asyncio``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
from pathlib import Path

if not __package__:  # run as a script, ``python bench/runtime.py``: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parley.cli.event_loop import loading_for_good, run_long_lived, started_for_good

with loading_for_good():  # undone below by ``--loop asyncio``
    from bench.floors import floors
    from bench.hops import HopResult, measure_hops
    from bench.report import report
    from bench.stops import StopResult, measure_stops

BACKENDS = ("sqlite", "postgresql")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window per phase")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up before each window")
    parser.add_argument(
        "--pairs", default="1,8,32,64,128", help="concurrent ping-pong pairs to try"
    )
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--loop",
        choices=["server", "asyncio"],
        default="server",
        help="server: uvloop, modules and start frozen, as `parley serve`; asyncio: its own loop",
    )
    parser.add_argument("--stops", type=int, default=50, help="stops to time (0: skip)")
    parser.add_argument("--floor-seconds", type=float, default=2.0, help="0: skip the reference")
    parser.add_argument(
        "--statements", type=int, default=0, help="also list the N most frequent SQL statements"
    )
    parser.add_argument("--profile", type=Path, help="profile each hop window into this folder")
    parser.add_argument("--profiler", choices=["pyinstrument", "cprofile"], default="pyinstrument")
    parser.add_argument(
        "--log-file",
        type=Path,
        help="log Parley at INFO into this file, as `parley serve` logs (default: warnings only)",
    )
    return parser.parse_args(argv)


async def main(args: argparse.Namespace) -> None:
    backends = list(BACKENDS) if args.backend == "both" else [args.backend]
    pairs = [int(n) for n in args.pairs.split(",") if n.strip()]
    max_sessions = max(64, *pairs)
    found_floors = await floors(backends, args.floor_seconds) if args.floor_seconds > 0 else {}
    hops: dict[str, list[HopResult]] = {b: [] for b in backends}
    stops: dict[str, StopResult] = {}
    for backend in backends:
        for n in pairs:
            print(f"… {backend}: {n} pairs", file=sys.stderr, flush=True)
            profile = args.profile / f"{backend}-{n}" if args.profile else None
            hops[backend].append(
                await measure_hops(
                    backend,
                    n,
                    args.warmup,
                    args.seconds,
                    max_sessions,
                    profile,
                    args.profiler,
                    bool(args.statements),
                    started_for_good if args.loop == "server" else None,
                )
            )
        if args.stops > 0:
            print(f"… {backend}: {args.stops} stops", file=sys.stderr, flush=True)
            stops[backend] = await measure_stops(backend, args.stops)
    print(report(args, found_floors, hops, stops))


def _quiet_and_isolated(log_file: Path | None) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if log_file is not None:  # what an operator's hub pays: a line per run start and end
        handler = logging.FileHandler(log_file)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        parley_log = logging.getLogger("parley")
        parley_log.setLevel(logging.INFO)
        parley_log.addHandler(handler)
        parley_log.propagate = False
    # No operator settings leak in: Settings also reads PARLEY_* and parley.toml.
    for name in list(os.environ):
        if name.startswith("PARLEY_") and name != "PARLEY_BENCH_POSTGRES_URL":
            del os.environ[name]
    os.environ["PARLEY_CONFIG"] = "/nonexistent/parley.toml"


if __name__ == "__main__":
    arguments = parse_args()
    _quiet_and_isolated(arguments.log_file)
    if arguments.loop == "server":
        run_long_lived(main(arguments))
    else:
        gc.unfreeze()
        asyncio.run(main(arguments))
