"""A confined process group's lifetime: started through the launcher, ended as one.

Command brains (``command.py``) and an agent's ``run`` tool (``parley/tools/commands.py``)
start their programs the same way: through ``launcher.py`` with the node's ``ProcessPolicy``,
in a new session (the launcher leads its own process group), with a temporary folder of their
own; and end them the same way: SIGTERM to the group, a grace, then the launcher ends all it
started (detached processes too), then SIGKILL to whatever is left. This is that one way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from parley.brains.confinement import ProcessPolicy
from parley.brains.launcher import END_EVERYTHING
from parley.errors import Unavailable

# How long the launcher may take to end what a stopped process started, before SIGKILL.
END_SECONDS = 5.0


async def start(
    policy: ProcessPolicy,
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    temp: Path,
    stdin: int,
    what: str,
) -> asyncio.subprocess.Process:
    """``argv`` started through the launcher, confined by ``policy``, its stdout and stderr
    piped; ``temp`` is its own to change. Unavailable, naming ``what``, if it cannot start.
    Cancelled while it starts (a stop), it is still returned, and the cancel comes again at the
    caller's next wait, where the caller ends the group as on any stop (``_started``)."""
    command = policy.launcher_argv(list(argv), own=(temp,))
    creating = asyncio.create_subprocess_exec(
        *command,
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,  # its own process group, killed as one on stop
    )
    try:
        return await _started(creating)
    except OSError as error:
        raise Unavailable(f"{what} did not start: {error}") from None


async def _started(
    creating: Coroutine[Any, Any, asyncio.subprocess.Process],
) -> asyncio.subprocess.Process:
    """The process, waited for even if cancelled meanwhile. The process exists before its
    pipes are joined; asyncio's own answer to a cancel then is to kill the launcher alone and
    wait for the pipes to close, which the brain it had started (orphaned, not killed) holds
    open as long as it runs: the stop waited that long and ended nothing."""
    making = asyncio.ensure_future(creating)
    if not await _outlasting_cancels(making):
        return making.result()
    if making.cancelled() or making.exception() is not None:
        raise asyncio.CancelledError  # nothing started: the cancel goes on as it came
    task = asyncio.current_task()
    assert task is not None, "a process is started from a task"
    # The cancel taken here given again, counted once (an ``asyncio.timeout`` around the caller
    # still tells its own expiry), and delivered at the caller's next wait.
    task.uncancel()
    task.cancel()
    return making.result()


async def stop_group(process: asyncio.subprocess.Process, grace_seconds: float) -> None:
    """SIGTERM the group, give it ``grace_seconds``, then have the launcher end all it started
    (detached processes too); SIGKILL whatever is left."""
    pgid = process.pid  # start_new_session: the launcher's pid names the group
    try:
        if signal_group(pgid, signal.SIGTERM):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), grace_seconds)
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pgid, END_EVERYTHING)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), END_SECONDS)
    finally:
        # Even if cancelled again while waiting: grandchildren may outlive the leader.
        signal_group(pgid, signal.SIGKILL)
        await reap(process)


async def reap(process: asyncio.subprocess.Process) -> None:
    """Wait for the killed leader even if cancelled again meanwhile (a second stop, the node
    shutting down): a process left unawaited outlives its event loop's pipes."""
    if await _outlasting_cancels(asyncio.ensure_future(process.wait())):
        raise asyncio.CancelledError


async def _outlasting_cancels(waited: asyncio.Future[Any]) -> bool:
    """Wait until ``waited`` is done, whatever cancels come meanwhile; whether any came."""
    cancelled = False
    while not waited.done():
        try:
            await asyncio.wait({waited})
        except asyncio.CancelledError:
            cancelled = True
    return cancelled


def signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Signal a process group; False when nothing is left in it."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


async def drained(*readers: asyncio.Task[None]) -> None:
    """Let pipe readers take what is left: the pipes' writers are gone once the group is
    ended, so they end at once, unless something escaped the group, which is not waited for."""
    try:
        await asyncio.wait(readers, timeout=END_SECONDS)
    finally:
        for reader in readers:
            reader.cancel()  # done already, or given up on (also when cancelled meanwhile)


@contextlib.contextmanager
def run_temp(parent: Path | None) -> Iterator[Path]:
    """A process's own temporary folder (its TMPDIR), in ``parent``; removed with all it left
    in it when the process ends, however it ends."""
    temp = Path(tempfile.mkdtemp(prefix="run-" if parent else "parley-run-", dir=parent))
    try:
        yield temp.resolve()
    finally:
        shutil.rmtree(temp, ignore_errors=True)
