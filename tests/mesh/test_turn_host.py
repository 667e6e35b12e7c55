"""A node's turns lease their model brain: each turn gives it back however it ends, and the
node's one periodic sweep closes it once idle, with no turn coming to trigger it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from parley.brains.cache import BrainCache
from parley.brains.confinement import ProcessPolicy
from parley.broker.local import LocalBroker
from parley.node.messages import StopTurn, TurnStart, stop_subject, turn_subject
from parley.node.turn_host import TurnHost
from parley.tools.mcp_servers import McpServers
from parley.tools.workspace import WorkspaceTools
from tests.brains.support import Ending, FakeProvider, RecordingActions
from tests.support import eventually

NODE = "local"
IDLE = 0.05  # seconds of real time: the sweep that closes idle brains runs on its own


@pytest.mark.parametrize("ending", ["answers", "fails", "thinks until stopped"])
async def test_a_turn_gives_its_brain_back_however_it_ends(ending: Ending) -> None:
    broker, provider = LocalBroker(), FakeProvider(ending)
    host = TurnHost(
        NODE,
        broker,
        BrainCache(provider, idle_seconds=IDLE),
        _actions,
        _no_approvals,
        _no_tools,
        McpServers(policy=ProcessPolicy(confine=False)),
    )
    await host.start()
    try:
        await broker.request(turn_subject(NODE), _start(run_id=1), timeout=5)
        await _thinking(provider)
        if ending == "thinks until stopped":
            await asyncio.sleep(IDLE * 3)  # idle time passes while the turn holds it
            assert provider.closes() == [0]
            await broker.publish(stop_subject(NODE), StopTurn(run_id=1).model_dump_json().encode())

        async def closed() -> bool:
            return provider.closes() == [1]

        assert await eventually(closed)
    finally:
        await host.stop()
    assert provider.closes() == [1]  # closed once: the stop found nothing left to close


async def _thinking(provider: FakeProvider) -> None:
    async def started() -> bool:
        return bool(provider.built) and provider.built[0].thinking.is_set()

    assert await eventually(started)


def _actions(token: str, url: str) -> RecordingActions:
    return RecordingActions()


def _start(run_id: int) -> bytes:
    start = TurnStart(
        run_id=run_id,
        agent="alice",
        brain="openai:gpt-test",
        engram="You are Alice.",
        memory=[],
        history=[],
        new_text=[],
        root="carol's conversation",
        counterpart=None,
        was_stopped=False,
        brain_session_id=None,
        workspace=None,
        run_token="run-token",
        parley_url="http://127.0.0.1:1",
        tools=[],
    )
    return start.model_dump_json().encode()


class _NoApprovals:
    async def approve(self, tool: str, arguments: object) -> str | None:
        raise AssertionError(f"{tool} asks nobody here")


def _no_approvals(token: str, url: str) -> _NoApprovals:
    return _NoApprovals()


def _no_tools(start: TurnStart, workspace: Path) -> WorkspaceTools:
    raise AssertionError(f"run {start.run_id} called no workspace tool, yet one was made")
