"""The event loop of Parley's long-running processes, the server and a joined node: uvloop's.
Most of what they do is socket work (the store's statements, the broker's messages, HTTP), which
uvloop does for less CPU than asyncio's own loop. bench/mesh.py, runs of each interleaved: the
hub's CPU per hop through NATS 1.32-1.40 ms against 1.51-1.58, and NATS adding 1.55-1.86 ms p50
per hop against 1.74-2.38. Client commands, short-lived, keep asyncio's."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sys
from collections.abc import Coroutine, Iterator
from typing import Any, NoReturn, TypeVar

import uvloop

Result = TypeVar("Result")

# httpx imports its command-line tool with itself whenever click, rich and pygments are
# installed, as they are here (typer's): rich and pygments cost a server or a node about 0.1 s
# of CPU at each start, for a tool Parley never runs. Marked absent in ``sys.modules``, it is
# not imported, and httpx takes its own fallback (``httpx.main`` says it is not installed).
HTTPX_TOOL = "httpx._main"


def run_long_lived(main: Coroutine[Any, Any, Result]) -> Result:
    """``asyncio.run(main)``, on uvloop."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


@contextlib.contextmanager
def loading_for_good() -> Iterator[None]:
    """A long-running process's modules loaded with the cyclic garbage collector off, then
    frozen. Loading makes next to no garbage, yet the collector made full passes over the
    growing heap: 0.15 s of the server's 0.95 s of imports. Frozen, those 270,000 objects are
    left out of every later full pass, for the process's life. Without httpx's command-line
    tool (``HTTPX_TOOL``)."""
    sys.modules.setdefault(HTTPX_TOOL, None)  # type: ignore[arg-type]  # None: not importable
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def started_for_good() -> None:
    """What a long-running process made to start (its store, hub, node, routes: some 40,000
    objects that live as long as it) frozen out of the collector's full passes too, as its
    modules are. Left in, each full pass (about one a second under load) walked them: 15 ms of
    the loop's time each, against 2 ms frozen (bench/runtime.py at 20 pairs: the hops' p99
    18.6-19.6 ms against 13.3-15.1)."""
    gc.freeze()


def leave_at_once() -> NoReturn:
    """Exit 0 once a long-running process has shut down (its store closed, its broker told, its
    brains stopped), without the interpreter's own finalization: freeing every object of the
    server's modules one by one took a third of a second more at each stop, for no one. What
    is written is flushed first."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
