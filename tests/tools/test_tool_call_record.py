"""Every tool call on the record: a run keeps each call (tool, arguments shortened and without
secrets, result size, duration, why it was refused) in order with its text; whoever follows the
run sees each as it ends; a stop kills the call in flight and the stopped run keeps it; tool
calls spend the origin's hop budget; a turn makes at most MAX_TOOL_CALLS."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from parley.errors import Conflict, Invalid
from parley.node.messages import MAX_TOOL_CALLS, ToolCallRecord
from parley.node.tool_calls import SHOWN_TEXT, RecordedActions
from parley.settings import Settings
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.runs.support import follow, get, say
from tests.support import Harness, ManualClock, eventually, started

SECRET = "s3cr3t-value-9f8e7d6c5b"


@pytest.fixture
async def model(settings: Settings, clock: ManualClock) -> AsyncIterator[tuple[Harness, Script]]:
    script = Script(replies=[])
    with serving(openai_app(script)) as url:
        configured = settings.model_copy(
            update={"openai_base_url": f"{url}/v1", "openai_api_key": SecretStr("k"), **{}}
        )
        async with started(configured, clock) as parley:
            yield parley, script


async def _events(client: httpx.AsyncClient, run_id: int) -> list[dict[str, Any]]:
    """Every event of a run as it came, up to its end."""
    seen: list[dict[str, Any]] = []
    async with client.stream("GET", f"/api/v1/runs/{run_id}/events") as response:
        async for line in response.aiter_lines():
            if line:
                seen.append(json.loads(line))
                if seen[-1]["kind"] == "end":
                    return seen
    raise AssertionError("the event stream ended without an end event")


async def test_a_run_keeps_each_call_in_order_with_its_text_and_followers_see_them(
    model: tuple[Harness, Script],
) -> None:
    parley, script = model
    long_text = "x" * (SHOWN_TEXT + 500)
    script.replies = [
        Reply(
            text="Let me look. ", calls=(ToolCall("write", {"path": "a.md", "content": long_text}),)
        ),
        Reply(calls=(ToolCall("read", {"path": "missing.md"}),)),
        Reply(calls=(ToolCall("run", {"command": f"echo {SECRET} | wc -c"}),)),
        Reply(text="All done."),
    ]
    await parley.hire(
        "builder",
        brain="openai:m",
        tools=["read", "write", "run"],
        ask=[],  # acting unasked (approvals: tests/approvals/)
        env={"TOKEN": SECRET},
    )
    queued = await say(parley.owner, "builder", "go")
    events = await _events(parley.owner, queued["run_id"])
    shown = await get(parley.owner, f"/runs/{queued['run_id']}")
    calls = shown["tool_calls"]
    assert [c["seq"] for c in calls] == [1, 2, 3]
    assert [c["tool"] for c in calls] == ["write", "read", "run"]
    wrote, missed, ran = calls
    assert json.loads(wrote["arguments"])["path"] == "a.md"
    assert f"({len(long_text)} characters)" in wrote["arguments"]
    assert long_text not in wrote["arguments"]
    assert wrote["error"] is None and wrote["result_bytes"] > 0
    assert wrote["after_chars"] == len("Let me look. ")
    assert missed["error"] and "missing.md" in missed["error"] and missed["result_bytes"] == 0
    assert SECRET not in ran["arguments"] and "[redacted]" in ran["arguments"]
    assert ran["error"] is None and ran["duration_ms"] >= 0
    assert shown["run"]["output"].endswith("All done.")
    followed = [e for e in events if e["kind"] == "tool"]
    assert [e["tool"] for e in followed] == ["write", "read", "run"]
    assert {k: v for k, v in followed[0].items() if k != "kind"} == {
        k: v for k, v in wrote.items() if k != "seq"
    }
    assert SECRET not in json.dumps(events) and SECRET not in json.dumps(shown)


async def test_a_stop_kills_the_command_in_flight_and_the_stopped_run_keeps_the_call(
    model: tuple[Harness, Script],
) -> None:
    parley, script = model
    script.replies = [Reply(calls=(ToolCall("run", {"command": "echo $$ > pid; sleep 60"}),))]
    hired = await parley.hire("builder", brain="openai:m", tools=["run"], ask=[])
    pid_file = Path(hired["workspace"]) / "pid"  # in its workspace: the rest is not its to write
    queued = await say(parley.owner, "builder", "wait")
    assert await eventually(lambda: _written(pid_file))
    pid = int(pid_file.read_text())
    stopped = await parley.owner.post(f"/api/v1/runs/{queued['run_id']}/stop")
    assert stopped.status_code == 200
    assert await eventually(lambda: _gone(pid))

    async def kept() -> bool:
        detail = await get(parley.owner, f"/runs/{queued['run_id']}")
        return bool(detail["tool_calls"])

    assert await eventually(kept)
    detail = await get(parley.owner, f"/runs/{queued['run_id']}")
    assert detail["run"]["state"] == "stopped"
    [call] = detail["tool_calls"]
    assert (call["tool"], call["error"]) == ("run", "stopped")


async def test_tool_calls_spend_the_origin_s_hop_budget(
    settings: Settings, clock: ManualClock
) -> None:
    """Three calls of a budget of three: the send that follows in the next turn is refused."""
    script = Script(
        replies=[
            Reply(calls=(ToolCall("list", {}),)),
            Reply(calls=(ToolCall("list", {}),)),
            Reply(calls=(ToolCall("list", {}),)),
            Reply(text="Listed."),
            Reply(calls=(ToolCall("send", {"to": "clerk", "text": "hi"}),)),
            Reply(text="Sent?"),
        ]
    )
    with serving(openai_app(script)) as url:
        configured = settings.model_copy(
            update={
                "openai_base_url": f"{url}/v1",
                "openai_api_key": SecretStr("k"),
                "hop_budget": 3,
            }
        )
        async with started(configured, clock) as parley:
            await parley.hire("clerk")
            await parley.hire("builder", brain="openai:m")
            first = await say(parley.owner, "builder", "list")
            _, end = await follow(parley.owner, first["run_id"])
            assert end["state"] == "finished"
            second = await say(parley.owner, "builder", "now tell the clerk")
            _, end = await follow(parley.owner, second["run_id"])
    assert end["state"] == "finished"
    refused = script.bodies[-1]["messages"][-1]
    assert refused["role"] == "tool" and "hop budget" in refused["content"], refused


class _Counting:
    def __init__(self) -> None:
        self.done = 0

    async def act(self, name: str, arguments: Any) -> str:
        self.done += 1
        if name == "read":
            raise Invalid("no such file")
        return "ok"


async def test_a_turn_makes_at_most_max_tool_calls_then_is_refused_without_acting() -> None:
    told: list[ToolCallRecord] = []

    async def tell(call: ToolCallRecord) -> None:
        told.append(call)

    counting = _Counting()
    recorded = RecordedActions(counting, tell, lambda: 0)
    for _ in range(MAX_TOOL_CALLS):
        await recorded.act("list", {"path": "."})
    with pytest.raises(Conflict, match=f"{MAX_TOOL_CALLS} tool calls"):
        await recorded.act("list", {"path": "."})
    assert counting.done == MAX_TOOL_CALLS
    assert recorded.calls == told and len(told) == MAX_TOOL_CALLS


async def test_a_refused_call_is_recorded_with_its_reason_and_still_raised() -> None:
    told: list[ToolCallRecord] = []

    async def tell(call: ToolCallRecord) -> None:
        told.append(call)

    recorded = RecordedActions(_Counting(), tell, lambda: 7, secrets=[SECRET])
    with pytest.raises(Invalid):
        await recorded.act("read", {"path": SECRET})
    [call] = told
    assert call.error == "no such file" and call.after_chars == 7
    assert SECRET not in call.arguments


async def _written(path: Path) -> bool:
    return path.exists() and bool(path.read_text().strip())


async def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_run_s_calls_are_shown_only_to_whoever_may_read_the_run(
    model: tuple[Harness, Script],
) -> None:
    """Another member reads neither the run nor its calls, by id or by following it; the
    person whose conversation it answers does."""
    parley, script = model
    script.replies = [Reply(calls=(ToolCall("list", {}),)), Reply(text="Listed.")]
    await parley.hire("builder", brain="openai:m")
    ada = parley.client(await parley.add_person("ada"))
    bob = parley.client(await parley.add_person("bob"))
    async with ada, bob:
        queued = await say(ada, "builder", "go")
        _, end = await follow(ada, queued["run_id"])
        assert end["state"] == "finished"
        mine = await ada.get(f"/api/v1/runs/{queued['run_id']}")
        theirs = await bob.get(f"/api/v1/runs/{queued['run_id']}")
        followed = await bob.get(f"/api/v1/runs/{queued['run_id']}/events")
    assert [c["tool"] for c in mine.json()["tool_calls"]] == ["list"]
    assert theirs.status_code == 404 and "tool_calls" not in theirs.text
    assert followed.status_code == 404
