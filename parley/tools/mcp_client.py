"""One started MCP server of an agent's session: its transport and ``ClientSession``, owned by
one task.

The ``mcp`` library's transports and session are anyio contexts, which must be entered and
exited in one task: each started server has an owner task that enters them, initializes the
session, and waits until stopped (its cancel scope cancelled); then it leaves them, and the
library shuts the server down (for stdio: stdin closed, then SIGTERM, then SIGKILL to its
process group). Requests (list the tools, call one) are sent from the callers' tasks, which
the library allows: a request waits on its own response stream.

A stdio server starts as the ``run`` tool's command does (``commands.py``): through the
node's launcher, confined by its ``ProcessPolicy``, in the agent's workspace, with the
allow-listed environment, the agent's variables and a temporary folder of its own; its stderr
is kept (a bounded tail) to say why it failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TextIO

import anyio
import httpx2
from mcp import ClientSession
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from parley.brains import processes
from parley.brains.confinement import ProcessPolicy
from parley.brains.environment import TEMP, allowed_from
from parley.brains.tail import Tail
from parley.errors import Unavailable
from parley.redact import redact

log = logging.getLogger(__name__)

Connect = Callable[[], AbstractAsyncContextManager[TransportStreams]]

# Beyond the library's own bounded shutdown (about 7 s at worst): then the owner is cancelled.
STOP_SECONDS = 10.0
# How long a stopped server's stderr may take to reach its end.
STDERR_SECONDS = 1.0
# How much of a failed server's stderr an error quotes.
QUOTED = 2000


class McpClient:
    """A server being started, started, or stopped; ``broken`` once it cannot serve anymore."""

    def __init__(
        self, name: str, connect: Connect, *, start_seconds: float, stderr: Tail | None
    ) -> None:
        self.name = name
        self.broken = False
        self.stderr = stderr
        self._connect = connect
        self._start_seconds = start_seconds
        self._scope = anyio.CancelScope()  # cancelled to stop, even before the owner runs
        self._ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._own(), name=f"mcp server {name}")

    async def session(self) -> ClientSession:
        """The initialized session; Unavailable, saying why, if the server did not start."""
        try:
            async with asyncio.timeout(self._start_seconds + STOP_SECONDS):
                return await asyncio.shield(self._ready)
        except TimeoutError:  # the owner's own deadline should have come first
            self.broken = True
            raise Unavailable(f"MCP server {self.name} did not start") from None

    @property
    def started(self) -> bool:
        return self._ready.done() and not self._ready.exception()

    async def stop(self) -> None:
        self.broken = True
        self._scope.cancel()
        done, _ = await asyncio.wait({self._task}, timeout=STOP_SECONDS)
        if not done:
            log.warning("MCP server %s did not stop in time: cancelled", self.name)
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=STOP_SECONDS)

    def failure(self, why: str, secrets: Sequence[str] = ()) -> Unavailable:
        """Unavailable: ``why`` this server failed, with the end of its stderr if it wrote any;
        no secret in it."""
        said = self.stderr.text() if self.stderr else None
        if said:
            why = f"{why}; its stderr ends:\n{said[-QUOTED:]}"
        return Unavailable(redact(f"MCP server {self.name} {why}", secrets))

    async def _own(self) -> None:
        try:
            with self._scope:
                async with self._connect() as (read, write), ClientSession(read, write) as session:
                    with anyio.fail_after(self._start_seconds):
                        await session.initialize()
                    self._ready.set_result(session)
                    await anyio.sleep_forever()
        except Exception as error:
            self._settle(_reason(error, self._start_seconds))
        finally:
            self.broken = True
            self._settle("was stopped while starting")

    def _settle(self, why: str) -> None:
        if not self._ready.done():
            self._ready.set_exception(self.failure(why))
            self._ready.exception()  # retrieved: nobody may be waiting for it anymore


def _reason(error: BaseException, start_seconds: float) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, TimeoutError):
        return f"did not answer within {start_seconds:g} s"
    if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
        return "did not start: it ended before answering"
    if isinstance(error, httpx2.HTTPError):
        return f"could not be reached: {type(error).__name__}: {error}"
    return f"did not start: {error or type(error).__name__}"


# --- transports -------------------------------------------------------------------------------


def stdio_connect(
    argv: list[str],
    *,
    policy: ProcessPolicy,
    server_environment: Mapping[str, str],
    workspace: Path,
    env: Mapping[str, str],
    stderr: Tail,
) -> Connect:
    @contextlib.asynccontextmanager
    async def connect() -> AsyncIterator[TransportStreams]:
        with processes.run_temp(policy.run_temp) as temp:
            environment = {
                **allowed_from(server_environment, policy.parley_bin),
                **env,
                TEMP: str(temp),
            }
            command = [*_unset_defaults(environment), *policy.launcher_argv(argv, own=(temp,))]
            parameters = StdioServerParameters(
                command=command[0], args=command[1:], env=environment, cwd=workspace
            )
            async with (
                _stderr_into(stderr) as errlog,
                stdio_client(parameters, errlog=errlog) as streams,
            ):
                errlog.close()  # the server has its own copy: the pipe ends when it does
                yield streams

    return connect


def _unset_defaults(environment: Mapping[str, str]) -> list[str]:
    """``env -u NAME …``: the library adds some of the node's own variables (``USER``,
    ``SHELL``…) to the server's environment; a server sees the allow-list and its agent's
    variables only. Names only on the command line, never a value."""
    unset = sorted(set(get_default_environment()) - set(environment))
    env = shutil.which("env") or "/usr/bin/env"
    return [env, *(part for name in unset for part in ("-u", name)), "--"]


class _TailReader(asyncio.Protocol):
    def __init__(self, tail: Tail) -> None:
        self.tail = tail
        self.ended = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.tail.add(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


@contextlib.asynccontextmanager
async def _stderr_into(tail: Tail) -> AsyncIterator[TextIO]:
    """A pipe's writing end for a server's stderr, its other end read into ``tail``: the
    library takes a file, not a stream."""
    read_fd, write_fd = os.pipe()
    reader = _TailReader(tail)
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    try:
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: reader, pipe)
    except BaseException:
        pipe.close()
        os.close(write_fd)
        raise
    errlog = os.fdopen(write_fd, "w")
    try:
        yield errlog
    finally:
        errlog.close()
        # The server is gone by now: what it wrote last comes at once (unless it left a
        # child holding the pipe). Shielded: this runs as the server is being stopped.
        with anyio.move_on_after(STDERR_SECONDS, shield=True):
            await reader.ended
        transport.close()


def http_connect(
    url: str, headers: dict[str, str], start_seconds: float, call_seconds: float
) -> Connect:
    @contextlib.asynccontextmanager
    async def connect() -> AsyncIterator[TransportStreams]:
        timeout = httpx2.Timeout(start_seconds, read=call_seconds)
        async with (
            create_mcp_http_client(headers=headers, timeout=timeout) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            yield streams

    return connect
