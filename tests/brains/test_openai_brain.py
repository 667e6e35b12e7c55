"""The OpenAI-compatible brain against a fake chat-completions server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from parley.brains.brain import Brain
from parley.brains.openai_compat import NO_KEY, openai_brain
from tests.brains.contract import SEND_BOB, Body, BrainContract
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Fake, Reply, Script, serving
from tests.brains.support import Chunks, RecordingActions, a_turn


@pytest.fixture
def fake() -> Iterator[Fake]:
    script = Script(replies=[])
    with serving(openai_app(script)) as url:
        yield Fake(f"{url}/v1", script)


class TestOpenAIBrain(BrainContract):
    provider = "openai"
    model = "gpt-test"
    url_suffix = "/v1"

    def brain(self, base_url: str, api_key: str | None = "sk-test") -> Brain:
        # No SDK retries: a scripted 500 must fail at once.
        return openai_brain(self.model, base_url, api_key, max_retries=0)

    def system_of(self, body: Body) -> str:
        first = body["messages"][0]
        assert first["role"] == "system"
        return str(first["content"])

    def conversation_of(self, body: Body) -> list[tuple[str, str]]:
        return [
            (message["role"], _text(message["content"]))
            for message in body["messages"]
            if message["role"] in ("user", "assistant") and message.get("content")
        ]

    def tools_of(self, body: Body) -> dict[str, Body]:
        return {tool["function"]["name"]: tool["function"]["parameters"] for tool in body["tools"]}

    def tool_results_of(self, body: Body) -> list[str]:
        return [_text(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def _text(content: str | list[dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


async def test_the_api_key_goes_as_a_bearer_token(fake: Fake) -> None:
    fake.script.replies = [Reply(text="ok")]
    await openai_brain("gpt-test", fake.url, "sk-secret").think(
        a_turn(), RecordingActions(), Chunks()
    )
    assert fake.script.headers[0]["authorization"] == "Bearer sk-secret"


async def test_a_local_server_needs_no_key(fake: Fake) -> None:
    fake.script.replies = [Reply(text="ok")]
    await openai_brain("llama3", fake.url, None).think(a_turn(), RecordingActions(), Chunks())
    assert fake.script.headers[0]["authorization"] == f"Bearer {NO_KEY}"


async def test_tool_results_answer_their_calls(fake: Fake) -> None:
    fake.script.replies = [Reply(calls=(SEND_BOB, SEND_BOB)), Reply(text="ok")]
    await openai_brain("gpt-test", fake.url, None).think(a_turn(), RecordingActions(), Chunks())
    messages = fake.script.bodies[1]["messages"]
    [asked] = [m for m in messages if m.get("tool_calls")]
    called = [call["id"] for call in asked["tool_calls"]]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert called == answered == ["call_0", "call_1"]
