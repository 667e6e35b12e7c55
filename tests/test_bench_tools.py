"""The tools bench's own smoke test: a few calls of each case, and its table and verdict line
hold figures. No clock thresholds: the figures only have to be figures."""

from __future__ import annotations

import re

import pytest

from bench.tools import main


async def test_the_bench_prints_both_cases_and_what_parley_adds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    await main(calls=20)
    out = capsys.readouterr().out
    rows = re.findall(r"^((?:read|MCP echo), [\w ]+?)\s+([\d.]+)\s+([\d.]+)$", out, re.M)
    assert [row[0] for row in rows] == [
        "read, directly",
        "read, through Parley",
        "MCP echo, directly",
        "MCP echo, through Parley",
    ]
    for _, p50, p99 in rows:
        assert 0 < float(p50) <= float(p99)
    assert re.search(r"adds -?[\d.]+ ms at p50 \(<= 5.0 ms: (met|NOT met)\)", out)
    assert re.search(r"is [\d.]+x the direct one at p50 \(<= 1.2x: (met|NOT met)\)", out)
