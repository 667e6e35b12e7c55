"""OpenTelemetry is off unless an operator turns it on (``telemetry``): off, FastAPI no longer
looks for a configured provider at every request, and a2a-sdk's switch is set off before its
tracing loads, unless the environment set it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace

from parley.app import create_app
from parley.settings import Settings
from parley.startup import A2A_SDK_SWITCH, a2a_sdk_telemetry
from tests.support import ManualClock, started


async def _lookups_of_a_tracer_provider(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> int:
    """How often three requests to an app made with ``settings`` asked for the tracer provider."""
    asked: list[Any] = []
    real = trace.get_tracer_provider

    def counted() -> Any:
        asked.append(1)
        return real()

    monkeypatch.setattr(trace, "get_tracer_provider", counted)
    app = create_app(settings)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://parley.test"
    ) as client:
        for _ in range(3):
            await client.get("/healthz")
    return len(asked)


async def test_off_by_default_no_request_looks_for_a_tracer_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.telemetry is False
    assert await _lookups_of_a_tracer_provider(settings, monkeypatch) == 0


async def test_on_each_request_looks_for_the_provider_the_environment_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path, telemetry=True)
    assert await _lookups_of_a_tracer_provider(settings, monkeypatch) >= 3


@pytest.mark.parametrize(("enabled", "switch"), [(False, "false"), (True, "true")])
def test_a2a_sdk_s_switch_follows_the_setting(
    monkeypatch: pytest.MonkeyPatch, enabled: bool, switch: str
) -> None:
    monkeypatch.delenv(A2A_SDK_SWITCH, raising=False)
    a2a_sdk_telemetry(enabled)
    assert A2A_SDK_SWITCH in os.environ
    assert os.environ[A2A_SDK_SWITCH] == switch


def test_a2a_sdk_s_switch_set_by_the_environment_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(A2A_SDK_SWITCH, "true")
    a2a_sdk_telemetry(False)
    assert os.environ[A2A_SDK_SWITCH] == "true"


async def test_a_starting_installation_sets_a2a_sdk_s_switch_before_anything_loads_it(
    settings: Settings, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set by ``running`` itself (``parley serve`` makes its app after starting): an A2A
    agent's follower loading a2a-sdk's client at start reads it already set."""
    monkeypatch.delenv(A2A_SDK_SWITCH, raising=False)
    async with started(settings, clock):
        assert os.environ[A2A_SDK_SWITCH] == "false"
