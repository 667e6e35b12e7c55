"""A node builds each model brain spec's brain once (its provider client with it) and lends it to
each turn; it closes a client no turn holds once it is idle too long or past the bound, and every
one when it stops. Other brains are made at each turn."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from parley.brains.brain import Brain
from parley.brains.cache import BrainCache
from parley.brains.factory import brain_for
from parley.errors import Invalid
from parley.settings import Settings
from tests.brains.support import FakeProvider
from tests.support import ManualClock


async def _use(brains: BrainCache, spec: str) -> Brain:
    async with brains.lease(spec) as brain:
        return brain


async def test_a_spec_is_built_once_and_its_provider_client_closed_at_stop(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path)
    built: list[str] = []

    def build(spec: str) -> Brain:
        built.append(spec)
        return brain_for(spec, settings)

    brains = BrainCache(build)
    first = await _use(brains, "openai:gpt-test")
    assert await _use(brains, "openai:gpt-test") is first
    other = await _use(brains, "openai:gpt-other")
    assert other is not first
    assert built == ["openai:gpt-test", "openai:gpt-other"]
    clients = [_client(first), _client(other)]
    assert not any(client.is_closed() for client in clients)
    await brains.close()
    assert all(client.is_closed() for client in clients)
    assert await _use(brains, "openai:gpt-test") is not first  # a stopped cache starts afresh


async def test_a_brain_unused_too_long_is_closed_and_the_next_turn_builds_a_fresh_one() -> None:
    clock, provider = ManualClock(), FakeProvider()
    brains = BrainCache(provider, clock, idle_seconds=600)
    first = await _use(brains, "openai:a")
    clock.advance(seconds=599)
    assert await _use(brains, "openai:a") is first  # each turn restarts the idle time
    clock.advance(seconds=599)
    await brains.sweep()
    assert provider.built[0].closes == 0
    clock.advance(seconds=1)
    await brains.sweep()  # what the node's one periodic sweep does while no turn comes
    assert provider.built[0].closes == 1
    assert await _use(brains, "openai:a") is not first
    assert len(provider.built) == 2


async def test_a_turn_does_not_get_a_brain_idle_too_long_even_before_a_sweep() -> None:
    clock, provider = ManualClock(), FakeProvider()
    brains = BrainCache(provider, clock, idle_seconds=60)
    first = await _use(brains, "openai:a")
    clock.advance(minutes=5)
    assert await _use(brains, "openai:a") is not first
    assert provider.built[0].closes == 1


async def test_past_the_bound_the_least_recently_used_brain_is_closed() -> None:
    provider = FakeProvider()
    brains = BrainCache(provider, ManualClock(), max_brains=2)
    a, b = await _use(brains, "openai:a"), await _use(brains, "openai:b")
    assert await _use(brains, "openai:a") is a  # b is now the least recently used
    await _use(brains, "openai:c")
    assert provider.closes() == [0, 1, 0]
    assert await _use(brains, "openai:a") is a
    assert await _use(brains, "openai:b") is not b  # built afresh; c goes in its place
    assert provider.closes() == [0, 1, 1, 0]


async def test_a_leased_brain_is_never_closed_neither_idle_nor_past_the_bound() -> None:
    clock, provider = ManualClock(), FakeProvider()
    brains = BrainCache(provider, clock, idle_seconds=60, max_brains=1)
    async with brains.lease("openai:a"):
        clock.advance(hours=1)  # a long turn
        await brains.sweep()
        await _use(brains, "openai:b")  # two kept, one too many: b goes, as a is held
        assert provider.closes() == [0, 1]
    assert provider.closes() == [0, 1]  # back within the bound, a was used just now


async def test_a_brain_dropped_while_leased_is_closed_when_its_last_turn_gives_it_back() -> None:
    provider = FakeProvider()
    brains = BrainCache(provider, ManualClock())
    async with brains.lease("openai:a"), brains.lease("openai:a"):
        await brains.close()  # the node stops while two turns still think with it
        assert provider.built[0].closes == 0
        assert await _use(brains, "openai:a") is not provider.built[0]
    assert provider.built[0].closes == 1
    assert provider.built[1].closes == 0


async def test_a_cancelled_turn_gives_its_brain_back() -> None:
    clock, provider = ManualClock(), FakeProvider()
    brains = BrainCache(provider, clock, idle_seconds=60)
    leased = asyncio.Event()

    async def turn() -> None:
        async with brains.lease("openai:a"):
            leased.set()
            await asyncio.Event().wait()  # a brain thinking until stopped

    task = asyncio.create_task(turn())
    await leased.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    clock.advance(seconds=60)
    await brains.sweep()
    assert provider.built[0].closes == 1


async def test_a_failing_close_is_logged_and_the_cache_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, provider = ManualClock(), FakeProvider(fails_to_close=frozenset({"openai:a"}))
    brains = BrainCache(provider, clock, idle_seconds=60)
    await _use(brains, "openai:a")
    await _use(brains, "openai:b")
    clock.advance(seconds=60)
    with caplog.at_level(logging.ERROR, logger="parley.brains.cache"):
        brain = await _use(brains, "openai:b")  # its lease sweeps a and b out first
    assert "closing a brain's client failed" in caplog.text
    assert provider.closes() == [1, 1, 0]
    assert brain is provider.built[2]


async def test_a_brain_without_a_client_is_made_afresh_at_each_turn(tmp_path: Path) -> None:
    """A command brain reads the node's environment when made: each turn sees today's."""
    brains = BrainCache(lambda spec: brain_for(spec, Settings(data_dir=tmp_path)))
    assert await _use(brains, "command:cat") is not await _use(brains, "command:cat")


async def test_a_spec_that_fails_to_build_is_not_kept(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    built: list[str] = []

    def build(spec: str) -> Brain:
        built.append(spec)
        return brain_for(spec, settings)

    brains = BrainCache(build)
    for _ in range(2):
        with pytest.raises(Invalid, match="is not a brain spec"):
            await _use(brains, "nonsense:x")
    assert built == ["nonsense:x", "nonsense:x"]


def _client(brain: Brain) -> Any:
    return brain._model.client  # type: ignore[attr-defined]  # the provider's SDK client
