"""The Anthropic brain against a fake Messages API server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from parley.brains.anthropic_brain import anthropic_brain
from parley.brains.brain import Brain
from tests.brains.contract import SEND_BOB, Body, BrainContract
from tests.brains.fake_anthropic import anthropic_app
from tests.brains.fakes import Fake, Reply, Script, serving
from tests.brains.support import Chunks, RecordingActions, a_turn


@pytest.fixture
def fake() -> Iterator[Fake]:
    script = Script(replies=[])
    with serving(anthropic_app(script)) as url:
        yield Fake(url, script)


class TestAnthropicBrain(BrainContract):
    provider = "anthropic"
    model = "claude-test"
    url_suffix = ""

    def brain(self, base_url: str, api_key: str | None = "sk-ant-test") -> Brain:
        # No SDK retries: a scripted 500 must fail at once.
        return anthropic_brain(self.model, base_url, api_key, max_retries=0)

    def system_of(self, body: Body) -> str:
        return _text(body["system"])

    def conversation_of(self, body: Body) -> list[tuple[str, str]]:
        # Anthropic merges consecutive user parts into one message of several text blocks.
        return [
            (message["role"], block["text"])
            for message in body["messages"]
            for block in _blocks(message["content"])
            if block["type"] == "text"
        ]

    def tools_of(self, body: Body) -> dict[str, Body]:
        return {tool["name"]: tool["input_schema"] for tool in body["tools"]}

    def tool_results_of(self, body: Body) -> list[str]:
        return [
            _text(block["content"])
            for message in body["messages"]
            for block in _blocks(message["content"])
            if block["type"] == "tool_result"
        ]


def _blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _text(content: str | list[dict[str, Any]]) -> str:
    return "".join(block["text"] for block in _blocks(content) if block["type"] == "text")


async def test_the_api_key_and_version_are_sent(fake: Fake) -> None:
    fake.script.replies = [Reply(text="ok")]
    brain = anthropic_brain("claude-test", fake.url, "sk-ant-secret")
    await brain.think(a_turn(), RecordingActions(), Chunks())
    headers = fake.script.headers[0]
    # The anthropic SDK (2.x) sends the key as a bearer token; earlier ones used x-api-key.
    assert "sk-ant-secret" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert headers["anthropic-version"]


async def test_every_request_carries_a_reply_budget(fake: Fake) -> None:
    fake.script.replies = [Reply(calls=(SEND_BOB,)), Reply(text="ok")]
    await anthropic_brain("claude-test", fake.url, None).think(
        a_turn(), RecordingActions(), Chunks()
    )
    assert all(body["max_tokens"] > 0 for body in fake.script.bodies)


async def test_tool_results_answer_their_calls(fake: Fake) -> None:
    fake.script.replies = [Reply(calls=(SEND_BOB, SEND_BOB)), Reply(text="ok")]
    await anthropic_brain("claude-test", fake.url, None).think(
        a_turn(), RecordingActions(), Chunks()
    )
    messages = fake.script.bodies[1]["messages"]
    uses = [b["id"] for m in messages for b in _blocks(m["content"]) if b["type"] == "tool_use"]
    results = [
        b["tool_use_id"]
        for m in messages
        for b in _blocks(m["content"])
        if b["type"] == "tool_result"
    ]
    assert uses == results == ["toolu_0", "toolu_1"]
