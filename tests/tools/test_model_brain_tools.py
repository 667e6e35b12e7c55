"""An agent with a model brain uses its workspace tools end to end: the hub starts its turn on
the node, the model (a local fake speaking the OpenAI or Anthropic protocol) calls each tool on
the agent's list, the node runs it in the agent's workspace, and the model reads each result.
A tool off the list is neither offered nor run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parley.settings import Settings
from tests.brains.fakes import Script, ToolCall
from tests.brains.providers import PROVIDERS, tool_results, with_model
from tests.runs.support import follow, say
from tests.support import ManualClock

Body = dict[str, Any]
EVERY_TOOL = ["read", "list", "find", "write", "edit", "run"]


def _offered(provider: str, body: Body) -> set[str]:
    key = "name" if provider == "anthropic" else "function"
    return {tool["name"] if key == "name" else tool["function"]["name"] for tool in body["tools"]}


async def _turn(
    provider: str, settings: Settings, clock: ManualClock, tools: list[str], calls: list[ToolCall]
) -> tuple[Script, dict[str, Any], Path]:
    """A turn of an agent with ``tools`` whose model makes ``calls`` one by one, then answers."""
    async with with_model(provider, settings, clock, calls) as (parley, script):
        hired = await parley.hire(
            "builder", brain=f"{provider}:model-test", tools=tools, ask=[]
        )  # acting unasked (approvals: tests/approvals/)
        queued = await say(parley.owner, "builder", "tidy the notes")
        _, end = await follow(parley.owner, queued["run_id"])
        workspace = Path((await parley.agent("builder"))["workspace"])
    assert hired["tools"] == tools
    return script, end, workspace


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_a_model_brain_calls_each_workspace_tool_in_its_own_workspace(
    provider: str, settings: Settings, clock: ManualClock
) -> None:
    calls = [
        ToolCall("write", {"path": "notes/todo.md", "content": "- buy tea\n- TODO call bob\n"}),
        ToolCall("edit", {"path": "notes/todo.md", "old": "buy tea", "new": "buy coffee"}),
        ToolCall("read", {"path": "notes/todo.md"}),
        ToolCall("list", {}),
        ToolCall("find", {"text": "TODO"}),
        ToolCall("run", {"command": "wc -l < notes/todo.md; echo from $PWD"}),
    ]
    script, end, workspace = await _turn(provider, settings, clock, EVERY_TOOL, calls)
    assert end["state"] == "finished", end
    assert end["output"] == "Done."
    assert (workspace / "notes/todo.md").read_text() == "- buy coffee\n- TODO call bob\n"
    assert _offered(provider, script.bodies[0]) >= set(EVERY_TOOL) | {"send", "report"}
    results = tool_results(provider, script.bodies[-1])
    assert len(results) == len(calls)
    wrote, edited, read, listed, found, ran = results
    assert "notes/todo.md" in wrote and "bytes" in wrote
    assert "notes/todo.md" in edited
    assert read.startswith("- buy coffee\n- TODO call bob")
    assert "notes/" in listed
    assert "notes/todo.md:2:" in found and "TODO call bob" in found
    assert "exit code 0" in ran and "\n2\n" in f"\n{ran}" and f"from {workspace}" in ran


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_a_tool_off_the_agent_s_list_is_not_offered_and_not_run(
    provider: str, settings: Settings, clock: ManualClock
) -> None:
    """Read-only tools: the model is offered no write or run, and a call to one anyway (a model
    may make up a tool) is refused with the reason; nothing was written or run."""
    calls = [
        ToolCall("run", {"command": "touch ran"}),
        ToolCall("write", {"path": "wrote", "content": "x"}),
        ToolCall("read", {"path": "../../etc/passwd"}),
        ToolCall("list", {"path": "."}),
    ]
    script, end, workspace = await _turn(provider, settings, clock, ["read", "list"], calls)
    assert end["state"] == "finished", end
    offered = _offered(provider, script.bodies[0])
    assert {"read", "list"} <= offered and not offered & {"write", "run", "edit", "find"}
    ran, wrote, escaped, listed = tool_results(provider, script.bodies[-1])
    assert ran.startswith("refused:") and "no tool 'run'" in ran
    assert wrote.startswith("refused:") and "no tool 'write'" in wrote
    assert escaped.startswith("refused:") and ".." in escaped
    assert not listed.startswith("refused:")
    assert not (workspace / "ran").exists() and not (workspace / "wrote").exists()
