"""A turn failed by its model provider: the provider's error reaches the run's reason, the
notice in the conversation and the log, and the API key it quoted back reaches none of them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from parley.settings import Settings
from tests.brains.fake_anthropic import anthropic_app
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, serving
from tests.runs.support import follow, get, say
from tests.support import ManualClock, items, started

KEY = "local-key-3f9a1c77e2"  # no known shape: only the configured value gives it away
PROVIDERS: dict[str, tuple[Callable[[Script], FastAPI], str, str]] = {
    # provider: (fake, the path its base URL ends with, the setting prefix)
    "openai": (openai_app, "/v1", "openai"),
    "anthropic": (anthropic_app, "", "anthropic"),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_a_refused_key_is_redacted_from_reason_notice_and_log(
    provider: str, settings: Settings, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, the SDKs' and the HTTP client's too
    app, suffix, prefix = PROVIDERS[provider]
    script = Script(replies=[Reply(text="Incorrect API key provided: {key}.", status=401)])
    with serving(app(script)) as url:
        configured = settings.model_copy(
            update={f"{prefix}_base_url": url + suffix, f"{prefix}_api_key": SecretStr(KEY)}
        )
        async with started(configured, clock) as parley:
            await parley.hire("barista", brain=f"{provider}:model-test")
            queued = await say(parley.owner, "barista", "a flat white, please")
            _, end = await follow(parley.owner, queued["run_id"])
            shown = await get(parley.owner, f"/runs/{queued['run_id']}")
            conversation = await get(parley.owner, "/conversations/barista")
    assert KEY in str(script.headers[0])  # the key was sent, and the provider quoted it back
    assert end["state"] == "failed"
    reason = shown["run"]["reason"]
    assert "HTTP 401" in reason and "Incorrect API key provided: [redacted]." in reason
    [notice] = [m["body"] for m in items(conversation["messages"]) if m["kind"] == "notice"]
    assert "Incorrect API key provided: [redacted]." in notice
    [failed] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("run ")][1:]
    assert failed.startswith(f"run {queued['run_id']} failed ") and "HTTP 401" in failed
    for text in (reason, notice, _everything(end), caplog.text):
        assert KEY not in text


def _everything(value: Any) -> str:
    return repr(value)
