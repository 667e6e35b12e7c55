"""A node builds each model brain spec's brain once (its provider client with it) and closes
those clients when it stops; other brains are made at each turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parley.brains.brain import Brain
from parley.brains.cache import BrainCache
from parley.brains.factory import brain_for
from parley.errors import Invalid
from parley.settings import Settings


async def test_a_spec_is_built_once_and_its_provider_client_closed_at_stop(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path)
    built: list[str] = []

    def build(spec: str) -> Brain:
        built.append(spec)
        return brain_for(spec, settings)

    brains = BrainCache(build)
    first = brains("openai:gpt-test")
    assert brains("openai:gpt-test") is first
    other = brains("openai:gpt-other")
    assert other is not first
    assert built == ["openai:gpt-test", "openai:gpt-other"]
    clients = [_client(first), _client(other)]
    assert not any(client.is_closed() for client in clients)
    await brains.close()
    assert all(client.is_closed() for client in clients)
    assert brains("openai:gpt-test") is not first  # a stopped cache starts afresh


async def test_a_brain_without_a_client_is_made_afresh_at_each_turn(tmp_path: Path) -> None:
    """A command brain reads the node's environment when made: each turn sees today's."""
    brains = BrainCache(lambda spec: brain_for(spec, Settings(data_dir=tmp_path)))
    assert brains("command:cat") is not brains("command:cat")


async def test_a_spec_that_fails_to_build_is_not_kept(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    built: list[str] = []

    def build(spec: str) -> Brain:
        built.append(spec)
        return brain_for(spec, settings)

    brains = BrainCache(build)
    for _ in range(2):
        with pytest.raises(Invalid, match="is not a brain spec"):
            brains("nonsense:x")
    assert built == ["nonsense:x", "nonsense:x"]


def _client(brain: Brain) -> Any:
    return brain._model.client  # type: ignore[attr-defined]  # the provider's SDK client
