"""A model brain's call of a tool that asks first waits for a person, end to end: the hub starts
the turn on its node, the model (a local fake of the OpenAI or Anthropic API) calls ``run``, the
call waits as an approval with its exact arguments in the person's list, and the decision
(approve, deny with a reason, nobody in time, or a stop) is what the turn goes on with. Both
stores."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.settings import Settings
from tests.approvals.support import decide, waiting
from tests.brains.fakes import ToolCall
from tests.brains.providers import PROVIDERS, tool_results, with_model
from tests.runs.support import follow, get, say
from tests.support import ManualClock, eventually, items

TOUCH = ToolCall("run", {"command": "touch ran && echo ran it"})


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_a_denied_call_does_not_act_and_the_model_reads_the_denial(
    provider: str, settings: Settings, clock: ManualClock
) -> None:
    async with with_model(provider, settings, clock, [TOUCH]) as (parley, script):
        hired = await parley.hire("builder", brain=f"{provider}:model-test", tools=["run"])
        assert hired["ask"] == ["run"]  # a new agent asks before run
        queued = await say(parley.owner, "builder", "make a file")
        (asked,) = await waiting(parley.owner)
        assert asked["tool"] == "run" and asked["arguments"] == TOUCH.args  # exactly
        assert asked["run_id"] == queued["run_id"] and asked["state"] == "waiting"
        denied = await decide(parley.owner, asked["id"], "deny", reason="not in this folder")
        _, end = await follow(parley.owner, queued["run_id"])
        workspace = Path((await parley.agent("builder"))["workspace"])
        run = await get(parley.owner, f"/runs/{queued['run_id']}")
        left = items(await get(parley.owner, "/me/approvals"))
    assert denied["state"] == "denied" and denied["decided_by"] == "owner"
    assert end["state"] == "finished" and end["output"] == "Done."
    (result,) = tool_results(provider, script.bodies[-1])
    assert result.startswith("refused:") and "owner denied it: not in this folder" in result
    assert not (workspace / "ran").exists()
    (call,) = run["tool_calls"]
    assert call["tool"] == "run" and "denied it" in call["error"]
    assert left == []


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_an_approved_call_acts_and_the_model_reads_its_result(
    provider: str, settings: Settings, clock: ManualClock
) -> None:
    async with with_model(provider, settings, clock, [TOUCH]) as (parley, script):
        await parley.hire("builder", brain=f"{provider}:model-test", tools=["run"])
        queued = await say(parley.owner, "builder", "make a file")
        (asked,) = await waiting(parley.owner)
        assert not (Path((await parley.agent("builder"))["workspace"]) / "ran").exists()
        approved = await decide(parley.owner, asked["id"], "approve")
        _, end = await follow(parley.owner, queued["run_id"])
        workspace = Path((await parley.agent("builder"))["workspace"])
        again = await decide(parley.owner, asked["id"], "deny", status=409)
    assert approved["state"] == "approved" and approved["decided_by"] == "owner"
    assert end["state"] == "finished"
    (result,) = tool_results(provider, script.bodies[-1])
    assert "ran it" in result and "exit code 0" in result
    assert (workspace / "ran").exists()
    assert "already approved by owner" in again["message"]  # the first decision stands


async def test_a_call_nobody_decides_in_time_is_denied_and_the_turn_goes_on(
    settings: Settings, clock: ManualClock
) -> None:
    configured = settings.model_copy(update={"approval_timeout_seconds": 60})
    async with with_model("openai", configured, clock, [TOUCH]) as (parley, script):
        await parley.hire("builder", brain="openai:model-test", tools=["run"])
        queued = await say(parley.owner, "builder", "make a file")
        (asked,) = await waiting(parley.owner)
        clock.advance(seconds=61)
        _, end = await follow(parley.owner, queued["run_id"])
        shown = await get(parley.owner, f"/approvals/{asked['id']}")
        late = await decide(parley.owner, asked["id"], "approve", status=409)
        workspace = Path((await parley.agent("builder"))["workspace"])
    assert end["state"] == "finished"
    (result,) = tool_results("openai", script.bodies[-1])
    assert "nobody approved it in time" in result
    assert shown["state"] == "denied" and shown["decided_by"] is None
    assert "already denied by nobody in time" in late["message"]
    assert not (workspace / "ran").exists()


async def test_stopping_a_turn_that_waits_ends_it_and_its_call_waits_for_nothing(
    settings: Settings, clock: ManualClock
) -> None:
    async with with_model("openai", settings, clock, [TOUCH]) as (parley, _):
        await parley.hire("builder", brain="openai:model-test", tools=["run"])
        queued = await say(parley.owner, "builder", "make a file")
        (asked,) = await waiting(parley.owner)
        stopped = await parley.owner.post(f"/api/v1/runs/{queued['run_id']}/stop")
        assert stopped.status_code == 200, stopped.text
        _, end = await follow(parley.owner, queued["run_id"])
        after = items(await get(parley.owner, "/me/approvals"))
        late = await decide(parley.owner, asked["id"], "approve", status=409)

        async def kept() -> bool:  # the node's report of a stopped turn comes just after
            return bool((await get(parley.owner, f"/runs/{queued['run_id']}"))["tool_calls"])

        assert await eventually(kept)
        run = await get(parley.owner, f"/runs/{queued['run_id']}")
        workspace = Path((await parley.agent("builder"))["workspace"])
    assert end["state"] == "stopped"
    assert after == []
    assert "its turn is stopped" in late["message"]
    # Cancelled on its node, or woken by the stop just before: either way it did not act.
    (call,) = run["tool_calls"]
    assert call["error"] in ("stopped", "run was not run: its turn ended before anyone decided")
    assert not (workspace / "ran").exists()


async def test_the_run_s_events_show_the_call_asking_and_how_it_was_decided(
    settings: Settings, clock: ManualClock
) -> None:
    """Who follows the run sees the approval asked (with the exact arguments) and decided."""
    async with with_model("openai", settings, clock, [TOUCH]) as (parley, _):
        await parley.hire("builder", brain="openai:model-test", tools=["run"])
        queued = await say(parley.owner, "builder", "make a file")
        following = asyncio.create_task(_events(parley.owner, queued["run_id"]))
        (asked,) = await waiting(parley.owner)
        await decide(parley.owner, asked["id"], "deny", reason="no")
        events = await following
    approvals = [e for e in events if e["kind"] == "approval"]
    assert [(e["id"], e["state"]) for e in approvals] == [
        (asked["id"], "waiting"),
        (asked["id"], "denied"),
    ]
    assert json.loads(approvals[0]["arguments"]) == TOUCH.args
    assert approvals[1]["decided_by"] == "owner" and approvals[1]["reason"] == "no"
    assert events[-1]["kind"] == "end" and events[-1]["state"] == "finished"


async def _events(client: httpx.AsyncClient, run_id: int) -> list[dict[str, Any]]:
    response = await client.get(f"/api/v1/runs/{run_id}/events")
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines() if line]


async def test_a_tool_off_the_ask_list_acts_without_asking_and_one_on_it_asks(
    settings: Settings, clock: ManualClock
) -> None:
    """``--ask write``: run acts at once, write waits."""
    calls = [TOUCH, ToolCall("write", {"path": "w.txt", "content": "x"})]
    async with with_model("openai", settings, clock, calls) as (parley, _):
        await parley.hire(
            "builder", brain="openai:model-test", tools=["run", "write"], ask=["write"]
        )
        queued = await say(parley.owner, "builder", "go")
        (asked,) = await waiting(parley.owner)
        workspace = Path((await parley.agent("builder"))["workspace"])
        ran_before_asking = (workspace / "ran").exists()
        await decide(parley.owner, asked["id"], "approve")
        _, end = await follow(parley.owner, queued["run_id"])
    assert asked["tool"] == "write" and ran_before_asking
    assert end["state"] == "finished" and (workspace / "w.txt").read_text() == "x"
