"""An agent with a model brain (a local fake speaking the OpenAI or Anthropic protocol) whose
calls ask first, and the person who decides them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI
from pydantic import SecretStr

from parley.settings import Settings
from tests.brains.fake_anthropic import anthropic_app
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.support import Harness, ManualClock, eventually, items, started

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


async def waiting(client: httpx.AsyncClient, count: int = 1) -> list[dict[str, Any]]:
    """The approvals waiting for ``client``'s person, once there are ``count``."""
    found: list[dict[str, Any]] = []

    async def there() -> bool:
        nonlocal found
        response = await client.get("/api/v1/me/approvals")
        assert response.status_code == 200, response.text
        found = items(response.json())
        return len(found) >= count

    assert await eventually(there), f"no {count} approval(s) came: {found}"
    return found


async def decide(
    client: httpx.AsyncClient, approval_id: int, verb: str, status: int = 200, **body: Any
) -> dict[str, Any]:
    response = await client.post(f"/api/v1/approvals/{approval_id}/{verb}", json=body)
    assert response.status_code == status, response.text
    answer = response.json()
    assert isinstance(answer, dict)
    return answer
