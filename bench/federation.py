"""Federation: durable messages/s and one-way latency between two Parley installations on
loopback, beside the same exchange through the a2a-sdk reference (its server and client, an
echo agent with its in-memory task store), in the same run and at the same concurrencies.

Run as ``.venv/bin/python bench/federation.py [--messages N] [--concurrency 1,8,32,128,512]
[--warmup N]``. Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.a2a_reference import measure_reference
from bench.federation_parley import measure_parley
from bench.figures import Figures

Rows = list[tuple[str, Figures]]


PARLEY, REFERENCE = "Parley federation", "a2a-sdk reference"
WARMUP = 50
Side = Callable[[int, int, int], Awaitable[Figures]]
SIDES: dict[str, Side] = {PARLEY: measure_parley, REFERENCE: measure_reference}


async def measure(
    names: list[str], messages: int, concurrencies: list[int], warmup: int | None
) -> Rows:
    """Each side at each concurrency (after ``warmup`` unmeasured messages; None: one per lane,
    at least ``WARMUP``, so that no lane's first message — a thread opened, a context made —
    falls in what is measured), the sides in turn so that the machine's other load falls
    on both alike; a side that is not written yet is left out with a note, and a line that
    fails (the reference's client gives up at high concurrency here) is left out with its
    error, the other lines still measured."""
    rows: Rows = []
    for concurrency in concurrencies:
        for name in names:
            _progress(f"{name}: {messages} messages at concurrency {concurrency}…")
            try:
                warm = max(WARMUP, concurrency) if warmup is None else warmup
                rows.append((name, await SIDES[name](messages, concurrency, warm)))
            except NotImplementedError as exc:
                _progress(f"{name}: left out, {exc}")
                names = [other for other in names if other != name]
            except Exception as exc:  # one failed line leaves the others
                _progress(f"{name} at concurrency {concurrency}: failed, left out ({exc!r})")
    return rows


def report(rows: Rows, messages: int) -> None:
    """One line per side and concurrency; Parley's messages/s also as a multiple of the
    reference's at the same concurrency."""
    print(f"\n## One-way exchange on loopback, {messages} measured messages per line\n")
    print("| exchange | concurrency | msgs/s | p50 ms | p99 ms | vs reference |")
    print("|---|---:|---:|---:|---:|---:|")
    reference = {figures.concurrency: figures for name, figures in rows if name == REFERENCE}
    for name, figures in rows:
        base = reference.get(figures.concurrency)
        ratio = f"{figures.per_second / base.per_second:.1f}x" if name == PARLEY and base else ""
        print(
            f"| {name} | {figures.concurrency} | {figures.per_second:.0f} |"
            f" {figures.p50_ms:.2f} | {figures.p99_ms:.2f} | {ratio} |"
        )
    if not any(name == PARLEY for name, _ in rows):
        print(f"\n{PARLEY}: not measured yet (the reference alone)")
        return
    print(f"\n{best_vs_best(rows)}")


def best_vs_best(rows: Rows) -> str:
    """Each side's best line (most messages/s, at whatever concurrency) and their ratio."""
    best: dict[str, Figures] = {}
    for name, figures in rows:
        if name not in best or figures.per_second > best[name].per_second:
            best[name] = figures
    if PARLEY not in best or REFERENCE not in best:
        return "best vs best: one side only"
    ours, theirs = best[PARLEY], best[REFERENCE]
    return (
        f"best vs best: {PARLEY} {ours.per_second:.0f} msgs/s at concurrency {ours.concurrency}"
        f" (p50 {ours.p50_ms:.2f} ms), {REFERENCE} {theirs.per_second:.0f} msgs/s at"
        f" concurrency {theirs.concurrency} (p50 {theirs.p50_ms:.2f} ms):"
        f" {ours.per_second / theirs.per_second:.1f}x"
    )


async def main(args: argparse.Namespace) -> int:
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    rows = await measure([PARLEY, REFERENCE], args.messages, concurrencies, args.warmup)
    report(rows, args.messages)
    return 0


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000, help="measured messages per line")
    parser.add_argument(
        "--concurrency", default="1,8,32,128,512", help="senders at once, one line each"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        help=f"unmeasured messages first (default: one per lane, {WARMUP} at least)",
    )
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(_arguments())))
