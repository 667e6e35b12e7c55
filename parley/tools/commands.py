"""The ``run`` tool: a shell command in the agent's workspace, started, confined and ended as a
command brain's process is (``parley/brains/processes.py``).

It sees the same allow-listed environment as a command brain (``environment.py``) plus the
variables it is given and a temporary folder of its own (``TMPDIR``), but no run token: it acts
on files, not on Parley. stdin is ``/dev/null``. Its stdout and stderr are read together as
they come, up to ``max_output_bytes`` kept; the rest is read and dropped, so a command printing
without end neither fills memory nor blocks on a full pipe. A timeout, or the awaiting task
cancelled, ends its whole process group, whatever it started with it.
"""

from __future__ import annotations

import asyncio
import secrets
import signal
from collections.abc import Mapping
from pathlib import Path

from parley.brains import groups, processes
from parley.brains.confinement import ProcessPolicy
from parley.brains.environment import TEMP, allowed_from
from parley.errors import Unavailable
from parley.text import without_nul
from parley.tools.limits import ToolLimits

SHELL = "/bin/sh"
_CHUNK = 64 * 1024
# A tool's command belongs to no run it knows of; its group is recorded under this one.
_NO_RUN = 0


class _Output:
    """What a command printed, in the order it came, kept up to ``cap`` bytes; the rest
    counted and dropped."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = max(self.cap - len(self.kept), 0)
        self.kept += data[:room]
        self.dropped += max(len(data) - room, 0)


async def run(
    command: str,
    *,
    workspace: Path,
    policy: ProcessPolicy,
    env: Mapping[str, str],
    limits: ToolLimits,
    grace_seconds: float,
) -> str:
    if not await asyncio.to_thread(workspace.is_dir):
        raise Unavailable(f"your workspace {str(workspace)!r} is missing")
    output = _Output(limits.max_output_bytes)
    with processes.run_temp(policy.run_temp) as temp:
        environment = {
            **allowed_from(policy.server_environment, policy.parley_bin),
            **env,
            TEMP: str(temp),
        }
        process = await processes.start(
            policy,
            [SHELL, "-c", command],
            cwd=workspace,
            env=environment,
            temp=temp,
            stdin=asyncio.subprocess.DEVNULL,
            what="the command",
        )
        # Its token is random and in no environment: the record is for the group alone.
        noted = groups.record(policy.groups, _NO_RUN, process.pid, secrets.token_hex(16))
        try:
            timed_out = await _watched(process, output, limits.run_timeout_seconds, grace_seconds)
        finally:
            groups.forget(noted)
    return _result(process.returncode, output, timed_out, limits.run_timeout_seconds)


async def _watched(
    process: asyncio.subprocess.Process, output: _Output, timeout: float, grace: float
) -> bool:
    """Read the command's output until it ends, or ``timeout`` passes (then True); its group
    is ended either way, and when this is cancelled."""
    assert process.stdout is not None and process.stderr is not None
    readers = [
        asyncio.create_task(_read_into(process.stdout, output)),
        asyncio.create_task(_read_into(process.stderr, output)),
    ]
    try:
        async with asyncio.timeout(timeout):
            await process.wait()  # the launcher ends all it started when the shell ends
            await asyncio.wait(readers)
    except TimeoutError:
        return True
    finally:
        try:
            await processes.stop_group(process, grace)
        finally:
            await processes.drained(*readers)  # what it wrote up to then is kept
    return False


async def _read_into(stream: asyncio.StreamReader, output: _Output) -> None:
    while data := await stream.read(_CHUNK):
        output.add(data)


def _result(code: int | None, output: _Output, timed_out: bool, timeout: float) -> str:
    if timed_out:
        head = f"timed out after {timeout:g} s: the command and all it started were ended"
    elif code is not None and code < 0:
        head = f"ended by signal {-code}{_signal_name(-code)}"
    else:
        head = f"exit code {code}"
    text = without_nul(output.kept.decode(errors="replace")).rstrip("\n") or "(no output)"
    parts = [head, text]
    if output.dropped:
        parts.append(
            f"[{output.dropped} more bytes of output dropped: only the first"
            f" {output.cap} are kept; redirect to a file and read or find in it]"
        )
    return "\n".join(parts)


def _signal_name(number: int) -> str:
    try:
        return f" ({signal.Signals(number).name})"
    except ValueError:
        return ""
