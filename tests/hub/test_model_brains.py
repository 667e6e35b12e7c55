"""An agent with an `openai:` brain, end to end: the hub runs its turn against an
OpenAI-compatible server (a local fake speaking the real protocol), its tool calls act through
the run's authority, and its streamed text is the reply in the person's conversation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.settings import Settings
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.runs.support import follow, get, say
from tests.support import Harness, ManualClock, items, oldest_first, started


@pytest.fixture
async def with_model(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[tuple[Harness, Script]]:
    script = Script(
        replies=[
            Reply(calls=(ToolCall("remember", {"note": "ada likes tea"}),)),
            Reply(text="Noted: you like tea."),
        ]
    )
    with serving(openai_app(script)) as url:
        configured = settings.model_copy(update={"openai_base_url": f"{url}/v1"})
        async with started(configured, clock) as parley:
            yield parley, script


async def test_an_openai_brain_answers_and_acts_through_tool_calls(
    with_model: tuple[Harness, Script],
) -> None:
    parley, script = with_model
    await parley.hire("barista", brain="openai:gpt-test", engram="You serve drinks.")
    queued = await say(parley.owner, "barista", "I like tea")
    _, end = await follow(parley.owner, queued["run_id"])
    assert end["state"] == "finished", end
    assert end["output"] == "Noted: you like tea."
    memory = await get(parley.owner, "/agents/barista/memory")
    assert [note["note"] for note in items(memory)] == ["ada likes tea"]
    first = script.bodies[0]
    assert first["model"] == "gpt-test"
    system = first["messages"][0]["content"]
    assert "You serve drinks." in system
    assert "owner's conversation with barista" in system
    assert {tool["function"]["name"] for tool in first["tools"]} >= {"send", "remember", "report"}
    shown = await get(parley.owner, "/conversations/barista")
    assert [m["body"] for m in oldest_first(shown["messages"])] == [
        "I like tea",
        "Noted: you like tea.",
    ]
