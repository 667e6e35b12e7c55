"""The server's and a joined node's event loop (parley/cli/event_loop.py): uvloop's, and what it
runs comes back as from asyncio.run, a result or an error. The processes' own behaviour on it
(signals, command brains' process groups, the broker) is what the serve and join tests check."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from parley.cli.event_loop import run_long_lived


async def _loop_kind() -> type[asyncio.AbstractEventLoop]:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop())


async def _fails() -> None:
    await asyncio.sleep(0)
    raise LookupError("the store is gone")


def test_a_long_lived_process_runs_on_uvloop() -> None:
    assert run_long_lived(_loop_kind()) is uvloop.Loop


def test_its_error_comes_back_as_it_was() -> None:
    with pytest.raises(LookupError, match="the store is gone"):
        run_long_lived(_fails())
