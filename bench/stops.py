"""Stop latency of a command brain's process: POST /runs/ID/stop → the process is gone."""

from __future__ import annotations

import asyncio
import shlex
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from .harness import call, hire, parley, read, write

SLEEPER = """
import os, sys, time
from pathlib import Path

pid_file = Path(sys.argv[1]) / (os.environ["PARLEY_RUN_ID"] + ".pid")
partial = pid_file.with_suffix(".tmp")
partial.write_text(str(os.getpid()))
partial.rename(pid_file)
time.sleep(60)
"""


@dataclass
class StopResult:
    total_ms: list[float]  # POST /runs/ID/stop sent → process gone
    post_ms: list[float]  # ... of which the HTTP call itself


def _gone(pid: int) -> bool:
    try:
        stat = read(Path(f"/proc/{pid}/stat"))
    except OSError:  # gone between listing and reading counts as gone too
        return True
    state = stat.rsplit(")", 1)[1].split()[0]
    return state in ("Z", "X")


class _Watch(threading.Thread):
    """Polls a pid about every millisecond, from a thread, and notes when it is gone."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.gone_at = float("nan")

    def run(self) -> None:
        while not _gone(self.pid):
            time.sleep(0.001)
        self.gone_at = time.perf_counter()


async def _until(check: Callable[[], Awaitable[bool]], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting")
        await asyncio.sleep(0.001)


async def measure_stops(backend: str, count: int) -> StopResult:
    result = StopResult([], [])
    async with parley(backend) as p:
        sleeper = write(p.work / "sleeper.py", SLEEPER)
        pids = p.work / "pids"
        pids.mkdir()
        command = shlex.join([sys.executable, str(sleeper), str(pids)])
        await hire(p.client, "sleeper", f"command:{command}", 1)
        for _ in range(count):
            queued = await call(
                p.client, "POST", "/conversations/sleeper/messages", json={"text": "sleep"}
            )
            run_id = queued["run_id"]
            pid_file = pids / f"{run_id}.pid"

            async def started(pid_file: Path = pid_file) -> bool:
                return pid_file.exists()  # noqa: ASYNC240 (a stat, polled)

            await _until(started)
            run = await call(p.client, "GET", f"/runs/{run_id}")
            if run["run"]["state"] != "running":
                raise RuntimeError(f"run {run_id} is {run['run']['state']}, not running")
            watch = _Watch(int(read(pid_file)))
            watch.start()
            sent = time.perf_counter()
            stopped = await call(p.client, "POST", f"/runs/{run_id}/stop")
            answered = time.perf_counter()
            if stopped["stopped"] != [run_id]:
                raise RuntimeError(f"stopping run {run_id} stopped {stopped['stopped']}")
            await asyncio.to_thread(watch.join, 30)
            result.total_ms.append(1000 * (watch.gone_at - sent))
            result.post_ms.append(1000 * (answered - sent))
    return result
