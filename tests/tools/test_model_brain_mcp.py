"""An agent's own MCP server, end to end: its node starts the server (a stdio server written
with the ``mcp`` library), its model brain (a fake OpenAI server) is offered the server's tools
as ``server__tool``, calls one, reads the result, and the run keeps the call as
``server.tool``; a server that cannot start fails the turn saying why."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from parley.settings import Settings
from tests.approvals.support import decide, waiting
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.brains.providers import tool_results, with_model
from tests.runs.support import follow, get, say
from tests.support import ManualClock, started
from tests.tools import mcp_test_server

SERVER = Path(mcp_test_server.__file__)
# A server that exits at start, saying why on stderr.
CRASHING = "import sys; sys.exit('cannot open the database: no such file')"


async def _turn(
    settings: Settings, clock: ManualClock, server: dict[str, str], replies: list[Reply]
) -> tuple[Script, dict[str, Any], dict[str, Any]]:
    """A turn of an agent with ``server`` whose model answers ``replies``: the fake's script,
    how the run ended, and the run as shown."""
    script = Script(replies=replies)
    with serving(openai_app(script)) as url:
        configured = settings.model_copy(
            update={"openai_base_url": f"{url}/v1", "openai_api_key": SecretStr("k")}
        )
        async with started(configured, clock) as parley:
            await parley.hire("counter", brain="openai:m", mcp=[server])
            queued = await say(parley.owner, "counter", "what is 2 + 40?")
            _, end = await follow(parley.owner, queued["run_id"])
            shown = await get(parley.owner, f"/runs/{queued['run_id']}")
    return script, end, shown


async def test_a_model_brain_calls_its_own_mcp_server_s_tool(
    settings: Settings, clock: ManualClock
) -> None:
    replies = [
        Reply(calls=(ToolCall("calc__add", {"a": 2, "b": 40}),)),
        Reply(calls=(ToolCall("calc__refuse", {"reason": "no"}),)),
        Reply(text="It is 42."),
    ]
    server = {"name": "calc", "command": f"{sys.executable} {SERVER}"}
    script, end, shown = await _turn(settings, clock, server, replies)
    assert (end["state"], end["output"]) == ("finished", "It is 42."), end
    offered = {tool["function"]["name"] for tool in script.bodies[0]["tools"]}
    assert {"calc__add", "calc__echo", "send", "read"} <= offered
    described = {t["function"]["name"]: t["function"] for t in script.bodies[0]["tools"]}
    assert described["calc__add"]["description"] == "calc.add: Adds two numbers."
    results = [m["content"] for m in script.bodies[-1]["messages"] if m["role"] == "tool"]
    assert results[0] == "42"
    assert results[1].startswith("refused: calc.refuse: ")
    assert "calc__add (calc.add): Adds two numbers." in script.bodies[0]["messages"][0]["content"]
    calls = shown["tool_calls"]
    assert [(c["tool"], c["error"] is None) for c in calls] == [
        ("calc.add", True),
        ("calc.refuse", False),
    ]


async def test_a_server_that_cannot_start_fails_the_turn_saying_why(
    settings: Settings, clock: ManualClock
) -> None:
    server = {"name": "db", "command": f"{sys.executable} -c {shlex.quote(CRASHING)}"}
    script, end, _ = await _turn(settings, clock, server, [Reply(text="never asked")])
    assert end["state"] == "failed"
    assert "MCP server db did not start" in end["reason"]
    assert "cannot open the database" in end["reason"]
    assert script.bodies == []  # the model was never asked


async def test_an_mcp_tool_on_the_ask_list_waits_for_approval_and_others_do_not(
    settings: Settings, clock: ManualClock
) -> None:
    """``--ask calc.add``: calc.echo acts at once, calc.add waits and, denied, is not called."""
    calls = [ToolCall("calc__echo", {"text": "hi"}), ToolCall("calc__add", {"a": 2, "b": 40})]
    server = {"name": "calc", "command": f"{sys.executable} {SERVER}"}
    async with with_model("openai", settings, clock, calls) as (parley, script):
        await parley.hire("counter", brain="openai:m", mcp=[server], ask=["calc.add"])
        queued = await say(parley.owner, "counter", "what is 2 + 40?")
        (asked,) = await waiting(parley.owner)
        await decide(parley.owner, asked["id"], "deny", reason="count yourself")
        _, end = await follow(parley.owner, queued["run_id"])
    echoed, added = tool_results("openai", script.bodies[-1])
    assert end["state"] == "finished", end
    assert asked["tool"] == "calc.add" and asked["arguments"] == {"a": 2, "b": 40}
    assert echoed == "hi"
    assert added.startswith("refused: calc.add was not run: owner denied it: count yourself")
