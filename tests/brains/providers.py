"""The fake model providers (local servers speaking the OpenAI and Anthropic APIs) and Parley
started against one: a turn whose model makes scripted tool calls, and what it was sent back."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from pydantic import SecretStr

from parley.settings import Settings
from tests.brains.fake_anthropic import anthropic_app
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.support import Harness, ManualClock, started

Body = dict[str, Any]
# provider: (fake, the path its base URL ends with)
PROVIDERS: dict[str, tuple[Callable[[Script], FastAPI], str]] = {
    "openai": (openai_app, "/v1"),
    "anthropic": (anthropic_app, ""),
}


@asynccontextmanager
async def with_model(
    provider: str, settings: Settings, clock: ManualClock, calls: list[ToolCall]
) -> AsyncIterator[tuple[Harness, Script]]:
    """Parley whose ``provider`` model makes ``calls`` one by one, then answers "Done."."""
    app, suffix = PROVIDERS[provider]
    script = Script(replies=[Reply(calls=(call,)) for call in calls] + [Reply(text="Done.")])
    with serving(app(script)) as url:
        configured = settings.model_copy(
            update={f"{provider}_base_url": url + suffix, f"{provider}_api_key": SecretStr("k")}
        )
        async with started(configured, clock) as parley:
            yield parley, script


def tool_results(provider: str, body: Body) -> list[str]:
    """The tool results the model was sent back, oldest first."""
    if provider == "openai":
        return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]
    found = []
    for message in body["messages"]:
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block["type"] == "tool_result":
                    content = block["content"]
                    text = content if isinstance(content, str) else content[0]["text"]
                    found.append(str(text))
    return found
