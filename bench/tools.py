"""A workspace tool's call through Parley against the same work done directly, in one run:
p50 and p99 of each, and what Parley adds (issue 33: at most 5 ms more at p50 for a read).

Through Parley is the path a model brain's tool call takes on its node: the turn's recorded
actions (the call noted, and reported on the broker as a ``tool`` event) and its workspace
actions (the agent's list checked, the path confined, the file opened beneath the workspace in a
worker thread). Directly is the file read in Python. No model is in either: its time is the
provider's, the same whichever way the tool runs.

    .venv/bin/python bench/tools.py --calls 2000
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from parley.brains.confinement import ProcessPolicy
from parley.broker.local import LocalBroker
from parley.node.messages import RunEvent, ToolCallRecord, TurnStart, run_events_subject
from parley.node.tool_calls import RecordedActions
from parley.node.workspace_acting import WorkspaceActing
from parley.tools.workspace import WorkspaceTools

READ_TARGET_MS = 5.0
TEXT = "".join(f"line {n}: the kettle is broken\n" for n in range(200))  # ~6 KiB


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def timed(call: Callable[[], Awaitable[object]], calls: int) -> list[float]:
    for _ in range(min(100, calls)):  # warm-up
        await call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _start(workspace: Path) -> TurnStart:
    return TurnStart(
        run_id=1, agent="bench", brain="offline", engram="", memory=[], history=[],
        new_text=[], root="a bench", counterpart=None, was_stopped=False,
        brain_session_id=None, workspace=str(workspace), run_token="prt_bench",
        parley_url="http://127.0.0.1:1", tools=["read"],
    )  # fmt: skip


class _NoHub:
    async def act(self, name: str, arguments: object) -> str:
        raise AssertionError(f"{name} is not a workspace tool")


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "notes.md").write_text(TEXT)
        broker = LocalBroker()
        policy = ProcessPolicy(confine=False)

        async def told(call: ToolCallRecord) -> None:
            event = RunEvent(run_id=1, kind="tool", tool_call=call)
            await broker.publish(run_events_subject("local"), event.model_dump_json().encode())

        def tools_for(start: TurnStart, where: Path) -> WorkspaceTools:
            return WorkspaceTools(where, policy=policy)

        calls_made: list[ToolCallRecord] = []
        acting = WorkspaceActing(_start(workspace), _NoHub(), tools_for)
        recorded = RecordedActions(acting, told, lambda: 0, calls=calls_made)

        async def direct() -> object:
            return (workspace / "notes.md").read_text()

        async def through_parley() -> object:
            calls_made.clear()  # one turn's cap is 100 calls: each sample is its own turn
            return await recorded.act("read", {"path": "notes.md"})

        rows = []
        for name, call in (("read, directly", direct), ("read, through Parley", through_parley)):
            samples = await timed(call, calls)
            rows.append((name, statistics.median(samples), percentile(samples, 0.99)))
        _print(rows)


def _print(rows: list[tuple[str, float, float]]) -> None:
    print(f"{'case':<28}{'p50 ms':>10}{'p99 ms':>10}")
    for name, p50, p99 in rows:
        print(f"{name:<28}{p50:>10.3f}{p99:>10.3f}")
    added = rows[1][1] - rows[0][1]
    verdict = "met" if added <= READ_TARGET_MS else "NOT met"
    target = f"target <= {READ_TARGET_MS} ms: {verdict}"
    print(f"a read through Parley adds {added:.3f} ms at p50 ({target})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls of each case")
    asyncio.run(main(parser.parse_args().calls))
