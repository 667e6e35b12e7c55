"""The federation bench's smoke test, at a small size and without timing thresholds: the a2a-sdk
reference really echoes through its own server and client and gives sane figures, and
the Parley side really sends between two installations, and bench/federation.py runs as a
script, printing both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.a2a_reference import measure_reference
from bench.federation import PARLEY, REFERENCE, SIDES, best_vs_best, measure, report
from bench.federation_parley import measure_parley
from bench.figures import Figures

ROOT = Path(__file__).parent.parent


async def test_the_reference_echoes_and_its_figures_are_sane() -> None:
    figures = await measure_reference(messages=20, concurrency=4, warmup=2)
    assert (figures.messages, figures.concurrency) == (20, 4)
    assert figures.per_second > 0
    assert 0 < figures.p50_ms <= figures.p99_ms


async def test_parley_sends_between_two_installations_and_its_figures_are_sane() -> None:
    figures = await measure_parley(messages=20, concurrency=4, warmup=2)
    assert (figures.messages, figures.concurrency) == (20, 4)
    assert figures.per_second > 0
    assert 0 < figures.p50_ms <= figures.p99_ms


def test_the_bench_runs_as_a_script_with_both_sides() -> None:
    command = ["bench/federation.py", "--messages", "8", "--concurrency", "1,2", "--warmup", "0"]
    done = subprocess.run(
        [sys.executable, *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for side in (PARLEY, REFERENCE):
        lines = [line for line in done.stdout.splitlines() if line.startswith(f"| {side} |")]
        assert [line.split("|")[2].strip() for line in lines] == ["1", "2"]
    assert "not measured yet" not in done.stdout
    (best,) = [line for line in done.stdout.splitlines() if line.startswith("best vs best:")]
    assert PARLEY in best and REFERENCE in best and best.endswith("x")


def test_percentiles_are_nearest_rank() -> None:
    figures = Figures.of([n / 1000 for n in range(100, 0, -1)], seconds=2.0, concurrency=1)
    assert (figures.p50_ms, figures.p99_ms) == pytest.approx((50, 99))
    assert figures.per_second == 50
    with pytest.raises(ValueError, match="no message"):
        Figures.of([], seconds=1.0, concurrency=1)


def test_parley_is_reported_as_a_multiple_of_the_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    reference = Figures(messages=100, concurrency=8, seconds=1.0, p50_ms=10, p99_ms=20)
    parley = Figures(messages=100, concurrency=8, seconds=0.25, p50_ms=2, p99_ms=5)
    report([(PARLEY, parley), (REFERENCE, reference)], messages=100)
    table = capsys.readouterr().out
    assert f"| {PARLEY} | 8 | 400 | 2.00 | 5.00 | 4.0x |" in table
    assert f"| {REFERENCE} | 8 | 100 | 10.00 | 20.00 |  |" in table
    assert "not measured yet" not in table


def test_each_sides_best_line_is_set_against_the_others() -> None:
    reference = [
        Figures(messages=100, concurrency=c, seconds=s, p50_ms=10, p99_ms=20)
        for c, s in ((1, 1.0), (8, 0.5), (32, 0.8))
    ]
    parley = [
        Figures(messages=100, concurrency=c, seconds=s, p50_ms=3, p99_ms=9)
        for c, s in ((1, 0.5), (8, 0.2), (32, 0.1))
    ]
    rows = [(PARLEY, f) for f in parley] + [(REFERENCE, f) for f in reference]
    assert best_vs_best(rows) == (
        f"best vs best: {PARLEY} 1000 msgs/s at concurrency 32 (p50 3.00 ms),"
        f" {REFERENCE} 200 msgs/s at concurrency 8 (p50 10.00 ms): 5.0x"
    )


async def test_a_line_that_fails_is_left_out_and_the_others_are_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def flaky(messages: int, concurrency: int, warmup: int) -> Figures:
        if concurrency > 1:
            raise ConnectionError("the client gave up")
        return Figures(messages=messages, concurrency=concurrency, seconds=1.0, p50_ms=1, p99_ms=2)

    monkeypatch.setitem(SIDES, REFERENCE, flaky)
    rows = await measure([REFERENCE], messages=10, concurrencies=[1, 8, 1], warmup=0)
    assert [(name, figures.concurrency) for name, figures in rows] == [
        (REFERENCE, 1),
        (REFERENCE, 1),
    ]
