"""A node joined from a machine of its own (``joining``: no store): its model brains act through
the hub's HTTP API, it runs its agents' turns in its own workspaces, another name's credentials
are refused on both sides, a node gone silent fails its turns as ``node_lost``, and a hub back
from a stop asks its nodes before it marks anything ``interrupted``."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from parley.cli.following import node_lost_notice
from parley.errors import Unauthorized
from parley.hub.reconciliation import reconcile
from parley.node.joining import joining
from parley.node.keys import NodeKey
from parley.node.runner import NodeRunner
from parley.settings import Settings
from tests.approvals.support import decide, waiting
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.node_creds import node_key
from tests.runs.support import follow, get, say, script
from tests.support import Harness, ManualClock, eventually, items, started

SLOW = "otherwise: [{sleep: 60}]"


@asynccontextmanager
async def joined(
    parley: Harness,
    workspaces: Path,
    name: str = "gamma",
    key: NodeKey | None = None,
    replace: bool = False,
    **settings: Any,
) -> AsyncIterator[NodeRunner]:
    """Node ``name`` joined to ``parley``'s mesh as a remote machine joins it: its own settings,
    no store; its actions reach the hub's real app over HTTP. ``key``: its credentials' (by
    default, those issued for ``name``)."""
    node_settings = parley.context.settings.model_copy(update={"node_name": name, **settings})
    key = key or await node_key(parley, name)
    broker = parley.context.broker
    async with (
        parley.client() as hub,
        joining(node_settings, broker, key, workspaces, hub=hub, replace=replace) as node,
    ):
        yield node


async def _run(parley: Harness, run_id: int) -> dict[str, Any]:
    run = (await get(parley.owner, f"/runs/{run_id}"))["run"]
    assert isinstance(run, dict)
    return run


async def _state_is(parley: Harness, run_id: int, state: str) -> bool:
    return bool((await _run(parley, run_id))["state"] == state)


async def test_a_model_brain_on_a_joined_node_acts_through_the_hubs_api(
    parley: Harness, tmp_path: Path
) -> None:
    fake = Script(
        replies=[
            Reply(calls=(ToolCall("remember", {"note": "ada likes tea"}),)),
            Reply(text="Noted: you like tea."),
        ]
    )
    with serving(openai_app(fake)) as url:
        async with joined(parley, tmp_path / "gamma", openai_base_url=f"{url}/v1"):
            agent = await parley.hire("barista", node="gamma", brain="openai:gpt-test")
            assert Path(agent["workspace"]) == (tmp_path / "gamma" / "barista").resolve()
            queued = await say(parley.owner, "barista", "I like tea")
            _, end = await follow(parley.owner, queued["run_id"])
    assert (end["state"], end["output"]) == ("finished", "Noted: you like tea."), end
    memory = await get(parley.owner, "/agents/barista/memory")
    assert [note["note"] for note in items(memory)] == ["ada likes tea"]


async def test_a_joined_node_runs_workspace_tools_itself_in_its_own_workspace(
    parley: Harness, tmp_path: Path
) -> None:
    """The hub never touches another machine's files: the write and the command happen in
    gamma's workspace folder (here, a folder of the same machine standing for it)."""
    fake = Script(
        replies=[
            Reply(calls=(ToolCall("write", {"path": "plan.md", "content": "# Plan"}),)),
            Reply(calls=(ToolCall("run", {"command": "cat plan.md; echo; hostname -s"}),)),
            Reply(text="Written."),
        ]
    )
    with serving(openai_app(fake)) as url:
        async with joined(parley, tmp_path / "gamma", openai_base_url=f"{url}/v1"):
            await parley.hire(
                "planner", node="gamma", brain="openai:gpt-test", tools=["write", "run"], ask=[]
            )
            queued = await say(parley.owner, "planner", "write the plan")
            _, end = await follow(parley.owner, queued["run_id"])
    assert (end["state"], end["output"]) == ("finished", "Written."), end
    assert (tmp_path / "gamma" / "planner" / "plan.md").read_text() == "# Plan"
    ran = fake.bodies[2]["messages"][-1]
    assert ran["role"] == "tool" and "exit code 0" in ran["content"]
    assert "# Plan" in ran["content"]


async def test_a_joined_node_s_call_waits_for_approval_at_the_hub_and_acts_once_approved(
    parley: Harness, tmp_path: Path
) -> None:
    """The joined node asks at the hub under the run's token and waits in long polls; the
    person decides at the hub; the node runs the approved command in its own workspace, and
    a denied one not at all."""
    fake = Script(
        replies=[
            Reply(calls=(ToolCall("run", {"command": "echo yes > approved.txt"}),)),
            Reply(calls=(ToolCall("run", {"command": "echo no > denied.txt"}),)),
            Reply(text="Both asked."),
        ]
    )
    with serving(openai_app(fake)) as url:
        async with joined(parley, tmp_path / "gamma", openai_base_url=f"{url}/v1"):
            await parley.hire("deployer", node="gamma", brain="openai:gpt-test", tools=["run"])
            queued = await say(parley.owner, "deployer", "deploy")
            (first,) = await waiting(parley.owner)
            await decide(parley.owner, first["id"], "approve")
            (second,) = await waiting(parley.owner)
            await decide(parley.owner, second["id"], "deny", reason="once is enough")
            _, end = await follow(parley.owner, queued["run_id"])
    assert (end["state"], end["output"]) == ("finished", "Both asked."), end
    assert first["node"] == "gamma" and first["arguments"] == {"command": "echo yes > approved.txt"}
    assert (tmp_path / "gamma" / "deployer" / "approved.txt").read_text() == "yes\n"
    assert not (tmp_path / "gamma" / "deployer" / "denied.txt").exists()
    denied = fake.bodies[2]["messages"][-1]
    assert denied["role"] == "tool" and "owner denied it: once is enough" in denied["content"]


async def test_a_refused_action_of_a_remote_turn_is_the_tools_result(
    parley: Harness, tmp_path: Path
) -> None:
    fake = Script(
        replies=[
            Reply(calls=(ToolCall("send", {"to": "nobody", "text": "hi"}),)),
            Reply(text="Could not send."),
        ]
    )
    with serving(openai_app(fake)) as url:
        async with joined(parley, tmp_path / "gamma", openai_base_url=f"{url}/v1"):
            await parley.hire("barista", node="gamma", brain="openai:gpt-test")
            queued = await say(parley.owner, "barista", "tell nobody hi")
            _, end = await follow(parley.owner, queued["run_id"])
    assert end["state"] == "finished", end
    tool_result = fake.bodies[1]["messages"][-1]
    assert tool_result["role"] == "tool"
    assert "nobody" in tool_result["content"], tool_result  # the hub's refusal, as it said it


async def test_node_list_shows_each_nodes_host_status_agents_and_running_turns(
    parley: Harness, tmp_path: Path
) -> None:
    slow = script(tmp_path, "slow", SLOW)
    async with joined(parley, tmp_path / "gamma"):
        await parley.hire("one", node="gamma", brain=slow)
        await parley.hire("two", node="gamma", brain=slow)
        await parley.hire("three", brain=slow)
        busy = await say(parley.owner, "one", "work")
        assert await eventually(lambda: _state_is(parley, busy["run_id"], "running"))
        nodes = await _nodes(parley)
        assert _load(nodes, "gamma") == ("online", 2, 1)
        assert _load(nodes, "local") == ("online", 1, 0)
        assert nodes["gamma"]["hostname"] == socket.gethostname()
        shown = await get(parley.owner, "/nodes/gamma")
        assert (shown["agents"], shown["running"]) == (2, 1)


async def _nodes(parley: Harness) -> dict[str, dict[str, Any]]:
    return {node["name"]: node for node in items(await get(parley.owner, "/nodes"))}


def _load(nodes: dict[str, dict[str, Any]], name: str) -> tuple[str, int, int]:
    node = nodes[name]
    return node["status"], node["agents"], node["running"]


async def test_a_brain_is_checked_on_its_node_not_on_the_hub(
    parley: Harness, tmp_path: Path
) -> None:
    """The hub (no key, OpenAI's own URL) would refuse this model brain; gamma, with its own
    local server, takes it. A scripted file missing on gamma is refused, naming the node."""
    async with joined(parley, tmp_path / "gamma", openai_base_url="http://127.0.0.1:9/v1"):
        hired = await parley.owner.post(
            "/api/v1/agents", json={"name": "m", "node": "gamma", "brain": "openai:gpt-test"}
        )
        assert hired.status_code == 201, hired.text
        refused = await parley.owner.post(
            "/api/v1/agents",
            json={"name": "s", "node": "gamma", "brain": f"scripted:{tmp_path}/none.yaml"},
        )
        assert refused.status_code == 400
        assert refused.json()["message"].startswith(
            f"on node gamma: scripted brain file {tmp_path}/none.yaml "
        )
        changed = await parley.owner.patch(
            "/api/v1/agents/m", json={"brain": f"scripted:{tmp_path}/none.yaml"}
        )
        assert changed.status_code == 400
        assert changed.json()["message"].startswith("on node gamma: scripted brain file")
    assert (await parley.owner.get("/api/v1/agents/s")).status_code == 404
    assert (await parley.agent("m"))["brain"] == "openai:gpt-test"


async def test_a_command_brains_program_is_looked_for_on_its_node(
    parley: Harness, tmp_path: Path
) -> None:
    async with joined(parley, tmp_path / "gamma"):
        refused = await parley.owner.post(
            "/api/v1/agents",
            json={"name": "c", "node": "gamma", "brain": "command:no-such-program-h6"},
        )
        assert refused.status_code == 400
        assert refused.json()["message"] == (
            "on node gamma: command brain 'no-such-program-h6': program 'no-such-program-h6'"
            " was not found"
        )


async def test_a_brain_for_a_node_away_is_taken_with_a_notice(
    parley: Harness, tmp_path: Path
) -> None:
    async with joined(parley, tmp_path / "gamma"):
        pass
    hired = await parley.hire("m", node="gamma", brain="openai:gpt-test")
    assert hired["notices"] == [
        "notice: node gamma cannot be asked now; brain openai:gpt-test is checked at its turn"
    ]


async def test_another_names_credentials_are_refused_on_the_node_and_logged_on_the_hub(
    parley: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await node_key(parley, "gamma")  # gamma's own exist: these are another's
    delta = await node_key(parley, "delta")
    with (
        caplog.at_level(logging.WARNING, logger="parley.mesh.registry"),
        pytest.raises(Unauthorized) as refused,
    ):
        async with joined(parley, tmp_path / "gamma", key=delta):
            pass
    reason = "not this node's credentials; issue new ones with parley node add gamma --replace"
    assert refused.value.message == f"the hub refused node 'gamma': {reason}"
    assert f"node 'gamma' refused on parley.mesh.register.gamma: {reason}" in caplog.text
    assert (await parley.owner.get("/api/v1/nodes/gamma")).status_code == 404


@pytest.fixture
def quick_loss(settings: Settings) -> Settings:
    """A hub that looks for lost nodes four times a second (their silence is on the test's
    clock, which only moves when told)."""
    return settings.model_copy(update={"node_offline_after_seconds": 1.0})


async def test_a_node_gone_silent_fails_its_turns_as_node_lost_and_its_text_waits(
    quick_loss: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    async with started(quick_loss, clock) as parley:
        slow = script(tmp_path, "slow", SLOW)
        async with joined(parley, tmp_path / "gamma"):
            await parley.hire("worker", node="gamma", brain=slow)
            await parley.hire("bystander", brain=slow)  # on the hub's own node
            lost = await say(parley.owner, "worker", "first")
            kept = await say(parley.owner, "bystander", "keep going")
            assert await eventually(lambda: _state_is(parley, lost["run_id"], "running"))
            assert await eventually(lambda: _state_is(parley, kept["run_id"], "running"))
            assert _load(await _nodes(parley), "gamma") == ("online", 1, 1)
            clock.advance(seconds=5)  # gamma's heartbeats stop being heard
            assert await eventually(lambda: _state_is(parley, lost["run_id"], "failed"))
            assert _load(await _nodes(parley), "gamma") == ("offline", 1, 0)
        assert (await _run(parley, lost["run_id"]))["reason"] == "node_lost"
        assert await _state_is(parley, kept["run_id"], "running")  # nothing else is touched
        # Whoever waited is told where the text is and what to do; the run keeps its input.
        end = await _end_event(parley, lost["run_id"])
        assert node_lost_notice(end) == (
            "node gamma stopped answering; your text waits for it, or move the agent with"
            " `parley agent reassign worker --node NODE`"
        )
        failed = await get(parley.owner, f"/runs/{lost['run_id']}")
        assert [m["body"] for m in failed["input"]] == ["first"]
        # The text waits for the agent's next run, which runs once the agent can: here on the
        # hub's own node after a reassign.
        quick = script(tmp_path, "slow", "otherwise: [{reply: 'handled {text}'}]")
        assert quick == slow
        moved = await parley.owner.post("/api/v1/agents/worker/reassign", json={"node": "local"})
        assert moved.status_code == 200, moved.text
        runs = items(await get(parley.owner, "/runs?agent=worker"))
        retry = next(r for r in runs if r["id"] != lost["run_id"])
        assert await eventually(lambda: _state_is(parley, retry["id"], "finished"))
        assert (await _run(parley, retry["id"]))["output"] == "handled first"
        inputs = (await get(parley.owner, f"/runs/{retry['id']}"))["input"]
        assert [m["body"] for m in inputs] == ["first"]
        failed = await get(parley.owner, f"/runs/{lost['run_id']}")
        assert [m["body"] for m in failed["input"]] == ["first"]  # kept, not given twice


async def _end_event(parley: Harness, run_id: int) -> dict[str, Any]:
    """The end of an ended run's events, as ``parley say`` reads it."""
    response = await parley.owner.get(f"/api/v1/runs/{run_id}/events")
    *_, end = [json.loads(line) for line in response.text.splitlines()]
    assert end["kind"] == "end", end
    return dict(end)


async def test_a_hub_back_from_a_stop_keeps_the_turns_its_nodes_still_run(
    parley: Harness, tmp_path: Path
) -> None:
    """What a hub does first at start, done here while gamma runs a turn and delta, gone, left
    one running in the store: gamma's turn goes on and its outcome is recorded once; only
    delta's is interrupted."""
    async with joined(parley, tmp_path / "delta", name="delta"):
        await parley.hire("orphan", node="delta", brain=script(tmp_path, "slow", SLOW))
        orphaned = await say(parley.owner, "orphan", "left behind")
        assert await eventually(lambda: _state_is(parley, orphaned["run_id"], "running"))
    # delta is gone without a word (a stopped node reports nothing of an unfinished turn)
    assert await _state_is(parley, orphaned["run_id"], "running")
    later = script(tmp_path, "later", "otherwise: [{sleep: 1}, {reply: 'done {text}'}]")
    async with joined(parley, tmp_path / "gamma"):
        await parley.hire("remote", node="gamma", brain=later)
        held = await say(parley.owner, "remote", "go on")
        assert await eventually(lambda: _state_is(parley, held["run_id"], "running"))
        context = parley.context
        caught_up = context.runtime.scheduler.caught_up
        assert await reconcile(context.store, context.broker, parley.clock, caught_up) == 1
        assert await _state_is(parley, held["run_id"], "running")
        assert (await _run(parley, orphaned["run_id"]))["reason"] == "interrupted"
        assert await eventually(lambda: _state_is(parley, held["run_id"], "finished"))
    shown = await get(parley.owner, "/conversations/remote")
    replies = [m["body"] for m in items(shown["messages"]) if m["kind"] == "reply"]
    assert replies == ["done go on"]
