"""Scale: the hot reads and writes at a tenth of the issue's size and at full size (10,000
agents, 100,000 agent conversations, 1,000,000 messages), on SQLite and PostgreSQL, and the
resident memory of an idle ``parley serve`` on each filled store.

Run as ``.venv/bin/python bench/scale.py [--backend sqlite|postgresql|both] [--repeat N]
[--fractions 0.1,1]``. Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bulk import Filled, Size, fill
from bench.harness import fresh_database
from bench.hot import Timing, time_side_by_side
from bench.resident import idle_server_rss_mb
from parley.store import Store

TARGET_RATIO = 1.5
TARGET_RSS_MB = 200.0


async def measure(
    backend: str, fractions: list[float], repeat: int
) -> dict[float, tuple[list[Timing], float]]:
    """Fill a store per size, time the operations on all of them side by side, then the idle
    server's memory on each."""
    with tempfile.TemporaryDirectory(prefix="parley-scale-") as tmp:
        async with contextlib.AsyncExitStack() as stack:
            urls = [
                await stack.enter_async_context(fresh_database(backend, Path(tmp), f"_{n}"))
                for n in range(len(fractions))
            ]
            stores = [
                (await Store.open(url), fraction)
                for url, fraction in zip(urls, fractions, strict=True)
            ]
            try:
                filled = [(store, await _fill(store, backend, f)) for store, f in stores]
                timings = await time_side_by_side(filled, repeat)
            finally:
                for store, _ in stores:
                    await store.close()
            results = {}
            for n, (url, fraction, kept) in enumerate(zip(urls, fractions, timings, strict=True)):
                rss = idle_server_rss_mb(url, Path(tmp) / f"data_{n}")
                _progress(f"{backend} x{fraction}: idle server {rss:.0f} MB resident")
                results[fraction] = (kept, rss)
    return results


async def _fill(store: Store, backend: str, fraction: float) -> Filled:
    started = time.perf_counter()
    filled = await fill(store, Size.of(fraction))
    took = time.perf_counter() - started
    rows = ", ".join(f"{n:,} {name}" for name, n in filled.rows.items())
    _progress(f"{backend} x{fraction}: filled in {took:.0f} s ({rows})")
    return filled


def report(backend: str, results: dict[float, tuple[list[Timing], float]]) -> bool:
    """The table of one backend; whether every target was met."""
    small, full = min(results), max(results)
    print(f"\n## {backend}: {Size.of(small).label} → {Size.of(full).label}")
    print(f"\n| operation | x{small} median ms | x{full} median ms | ratio | x{full} p95 ms |")
    print("|---|---:|---:|---:|---:|")
    met = True
    for before, after in zip(results[small][0], results[full][0], strict=True):
        ratio = after.median_ms / before.median_ms
        flag = "" if ratio <= TARGET_RATIO else " !"
        met &= not flag
        print(
            f"| {after.name} | {before.median_ms:.2f} | {after.median_ms:.2f} |"
            f" {ratio:.2f}{flag} | {after.p95_ms:.2f} |"
        )
    for fraction, (_, rss) in sorted(results.items()):
        flag = "" if rss < TARGET_RSS_MB else " !"
        met &= not flag
        print(f"\nidle `parley serve` on the x{fraction} store: {rss:.0f} MB resident{flag}")
    return met


async def main(args: argparse.Namespace) -> int:
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    fractions = [float(f) for f in args.fractions.split(",")]
    met = True
    for backend in backends:
        results = await measure(backend, fractions, args.repeat)
        met &= report(backend, results)
    print(
        f"\ntargets: each operation at full size within {TARGET_RATIO}x of its time at the"
        f" smallest; an idle server under {TARGET_RSS_MB:.0f} MB — {'met' if met else 'NOT met'}"
    )
    return 0 if met else 1


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--fractions", default="0.1,1", help="sizes, as fractions of the issue's")
    parser.add_argument("--repeat", type=int, default=200, help="timed calls per operation")
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(_arguments())))
