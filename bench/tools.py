"""A tool's call through Parley against the same call made directly, in one run: p50 and p99
of each (issue 33: a workspace read at most 5 ms more at p50; an MCP call at most 1.2 times the
direct one).

Through Parley is the path a model brain's tool call takes on its node: the turn's recorded
actions (the call noted, and reported on the broker as a ``tool`` event), then its workspace
actions: for a read, the agent's list checked, the path confined, the file opened beneath the
workspace in a worker thread; for an MCP call, the node's pool of the agent's servers (started
once, kept for the session). Directly is the file read in Python, and the same server's tool
called on a ``ClientSession`` of the ``mcp`` library. No model is in either: its time is the
provider's, the same whichever way the tool runs.

    .venv/bin/python bench/tools.py --calls 2000
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from parley.brains.confinement import ProcessPolicy
from parley.broker.local import LocalBroker
from parley.node.messages import (
    McpServerGiven,
    RunEvent,
    ToolCallRecord,
    TurnStart,
    run_events_subject,
)
from parley.node.tool_calls import RecordedActions
from parley.node.workspace_acting import WorkspaceActing, mcp_session
from parley.tools.mcp_servers import McpServers, McpServerSpec
from parley.tools.workspace import WorkspaceTools

READ_TARGET_MS = 5.0
MCP_TARGET_RATIO = 1.2
TEXT = "".join(f"line {n}: the kettle is broken\n" for n in range(200))  # ~6 KiB
# The tests' MCP server: an echo tool, written with the mcp library.
SERVER = Path(__file__).parent.parent / "tests" / "tools" / "mcp_test_server.py"

Row = tuple[str, float, float]


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def timed(name: str, call: Callable[[], Awaitable[object]], calls: int) -> Row:
    for _ in range(min(100, calls)):  # warm-up
        await call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return name, statistics.median(samples), percentile(samples, 0.99)


def _start(workspace: Path) -> TurnStart:
    return TurnStart(
        run_id=1, agent="bench", brain="offline", engram="", memory=[], history=[],
        new_text=[], root="a bench", counterpart=None, was_stopped=False,
        brain_session_id=None, workspace=str(workspace), run_token="prt_bench",
        parley_url="http://127.0.0.1:1", tools=["read"], session_id=1,
        mcp_servers=[McpServerGiven(name="t", command=f"{sys.executable} {SERVER}")],
    )  # fmt: skip


class _NoHub:
    async def act(self, name: str, arguments: object) -> str:
        raise AssertionError(f"{name} is not a tool of the node")

    async def approve(self, tool: str, arguments: object) -> str | None:
        raise AssertionError(f"{tool} asks nobody here")


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "notes.md").write_text(TEXT)
        broker = LocalBroker()
        policy = ProcessPolicy(confine=False)
        servers = McpServers(policy=policy)
        start = _start(workspace)

        async def told(call: ToolCallRecord) -> None:
            event = RunEvent(run_id=1, kind="tool", tool_call=call)
            await broker.publish(run_events_subject("local"), event.model_dump_json().encode())

        def tools_for(_: TurnStart, where: Path) -> WorkspaceTools:
            return WorkspaceTools(where, policy=policy)

        made: list[ToolCallRecord] = []
        acting = WorkspaceActing(start, _NoHub(), tools_for, servers, _NoHub())
        recorded = RecordedActions(acting, told, lambda: 0, calls=made)

        async def through_parley(name: str, arguments: Mapping[str, object]) -> object:
            made.clear()  # a turn makes at most 100 calls: each sample is a turn of its own
            return await recorded.act(name, arguments)

        async def read_directly() -> object:
            return (workspace / "notes.md").read_text()

        rows = [
            await timed("read, directly", read_directly, calls),
            await timed(
                "read, through Parley", lambda: through_parley("read", {"path": "notes.md"}), calls
            ),
        ]
        try:
            spec = McpServerSpec("t", command=f"{sys.executable} {SERVER}")
            await servers.tools(mcp_session(start), [spec], workspace, {})
            rows.append(await _mcp_directly(calls))
            echo = {"text": "hello"}
            rows.append(
                await timed(
                    "MCP echo, through Parley", lambda: through_parley("t.echo", echo), calls
                )
            )
        finally:
            await servers.close()
        _print(rows)


async def _mcp_directly(calls: int) -> Row:
    parameters = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await timed(
            "MCP echo, directly",
            lambda: session.call_tool("echo", {"text": "hello"}),
            calls,
        )


def _print(rows: list[Row]) -> None:
    print(f"{'case':<28}{'p50 ms':>10}{'p99 ms':>10}")
    for name, p50, p99 in rows:
        print(f"{name:<28}{p50:>10.3f}{p99:>10.3f}")
    added = rows[1][1] - rows[0][1]
    met = "met" if added <= READ_TARGET_MS else "NOT met"
    print(f"a read through Parley adds {added:.3f} ms at p50 (<= {READ_TARGET_MS} ms: {met})")
    ratio = rows[3][1] / rows[2][1]
    met = "met" if ratio <= MCP_TARGET_RATIO else "NOT met"
    print(f"an MCP call through Parley is {ratio:.2f}x the direct one at p50 (<= 1.2x: {met})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls of each case")
    asyncio.run(main(parser.parse_args().calls))
