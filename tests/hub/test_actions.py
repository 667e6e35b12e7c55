"""Actions over HTTP with a run token, as a command brain's `parley act` uses them.
The topic, and so the root, is the run's; nothing in a request can choose it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.runs.support import get, say, script
from tests.support import Harness, eventually, items

HOLDER = (
    "import os, pathlib, time\n"
    "pathlib.Path('token').write_text(os.environ['PARLEY_RUN_TOKEN'])\n"
    "time.sleep(60)\n"
)


async def _running_token(
    parley: Harness, tmp_path: Path, agent: str, task_text: str
) -> tuple[httpx.AsyncClient, dict[str, Any]]:
    """Hire ``agent`` with a brain that holds its turn open; give it a task; its run's client."""
    program = tmp_path / "holder.py"
    program.write_text(HOLDER)
    hired = await parley.hire(agent, brain=f"command:{sys.executable} {program}")
    token_file = Path(hired["workspace"]) / "token"
    task = (
        await parley.owner.post("/api/v1/tasks", json={"agent": agent, "text": task_text})
    ).json()
    assert await eventually(lambda: _written(token_file))
    return parley.client(token_file.read_text()), task


async def _written(path: Path) -> bool:
    return path.exists() and bool(path.read_text())


async def _act(run: httpx.AsyncClient, action: str, **body: object) -> dict[str, Any]:
    response = await run.post(f"/api/v1/act/{action}", json=body)
    result = response.json()
    assert isinstance(result, dict)
    result["status"] = response.status_code
    return result


async def test_every_action_works_for_the_run_behind_the_token(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire(
        "helper", brain=script(tmp_path, "helper", "otherwise: [{reply: 'ok {text}'}]")
    )
    run, task = await _running_token(parley, tmp_path, "boss", "plan the week")

    sent = await _act(run, "send", to="helper", text="can you help?")
    assert sent["status"] == 200 and sent["result"].startswith("sent to helper")
    reported = await _act(run, "report", text="halfway there")
    assert reported["result"] == f"reported on task {task['id']} (plan the week)"
    spawned = await _act(run, "spawn", agent="helper", text="sub job")
    assert "given to helper" in spawned["result"]
    remembered = await _act(run, "remember", note="Mondays are slow")
    assert remembered["result"] == "remembered"
    asked = await _act(run, "ask-node", node="local", text="load?")
    assert asked["result"] == "asked node local; its answer will arrive as new text"
    completed = await _act(run, "complete", result="planned")
    assert completed["result"] == f"task {task['id']} done"

    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert shown["topic"]["status"] == "done" and shown["topic"]["result"] == "planned"
    assert [m["body"] for m in items(shown["messages"]) if m["kind"] == "report"] == [
        "halfway there"
    ]
    assert [t["text"] for t in items(shown["subtasks"])] == ["sub job"]
    [conversation] = items(shown["agent_conversations"])
    assert (conversation["sender"], conversation["agent"]) == ("boss", "helper")
    assert conversation["root_id"] == task["id"]  # derived from the run, never asked for
    memory = await get(parley.owner, "/agents/boss/memory")
    assert [(n["note"], n["written_by"]) for n in items(memory)] == [("Mondays are slow", None)]
    exchanges = await get(parley.owner, "/nodes/local/exchanges")
    assert [m["author"] for m in items(exchanges) if m["kind"] == "text"] == ["boss"]


async def test_actions_refuse_bad_requests_clearly_and_change_nothing(
    parley: Harness, tmp_path: Path
) -> None:
    run, task = await _running_token(parley, tmp_path, "boss", "t")
    await parley.hire("gone")
    await parley.owner.post("/api/v1/agents/gone/retire", json={})
    cases: list[tuple[str, dict[str, object], int, str]] = [
        ("send", {"to": "ghost", "text": "x"}, 404, "no agent named 'ghost'"),
        ("send", {"to": "gone", "text": "x"}, 409, "agent gone is retired"),
        ("send", {"to": "boss", "text": "x"}, 400, "an agent cannot send to itself"),
        ("send", {"to": "x@elsewhere", "text": "x"}, 404, "no connection named 'elsewhere'"),
        (
            "send",
            {"to": "gone", "text": "x", "root": 1},
            400,
            "root: Extra inputs are not permitted",
        ),
        ("report", {"text": ""}, 400, "the text is empty"),
        ("spawn", {"agent": "ghost", "text": "x"}, 404, "no agent named 'ghost'"),
        ("ask-node", {"node": "nowhere", "text": "x"}, 404, "no node named 'nowhere'"),
        ("remember", {}, 400, "note: Field required"),
    ]
    for action, body, status, message in cases:
        result = await _act(run, action, **body)
        assert (result["status"], message in result["message"]) == (status, True), result
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert items(shown["subtasks"]) == [] and items(shown["agent_conversations"]) == []
    assert items(await get(parley.owner, "/agents/boss/memory")) == []


async def test_ask_node_from_a_run_brings_the_answer_back_as_new_text(
    parley: Harness, tmp_path: Path
) -> None:
    rules = """
        rules:
          - when: {from: "node:local"}
            do: [{complete: "node said: {text}"}]
        otherwise:
          - ask_node: {node: local, text: "how busy are you?"}
    """
    await parley.hire("curious", brain=script(tmp_path, "curious", rules))
    task = (
        await parley.owner.post("/api/v1/tasks", json={"agent": "curious", "text": "go"})
    ).json()
    assert await eventually(lambda: _done(parley, task["id"]))
    result = (await get(parley.owner, f"/tasks/{task['id']}"))["topic"]["result"]
    assert result.startswith("node said: node:local answers: node:local here")
    assert "I heard: how busy are you?" in result


async def _done(parley: Harness, task_id: int) -> bool:
    return bool((await get(parley.owner, f"/tasks/{task_id}"))["topic"]["status"] == "done")


async def test_a_scripted_turn_s_actions_apply_all_or_none_with_its_outcome(
    parley: Harness, tmp_path: Path
) -> None:
    """A rule brain's actions are applied with its turn's outcome: one refused, none applied."""
    from tests.runs.support import say_and_wait

    rules = """
        rules:
          - when: {text: "^both$"}
            do: [{remember: "first note"}, {send: {to: gone, text: hi}}]
        otherwise: [{remember: "{text}"}]
    """
    await parley.hire("gone")
    await parley.owner.post("/api/v1/agents/gone/retire", json={})
    await parley.hire("keeper", brain=script(tmp_path, "keeper", rules))
    end = await say_and_wait(parley, "keeper", "both")
    assert end["state"] == "failed"
    assert "agent gone is retired" in end["reason"]
    assert items(await get(parley.owner, "/agents/keeper/memory")) == []  # the remember was undone
    ok = await say_and_wait(parley, "keeper", "only this")
    assert ok["state"] == "finished"
    memory = items(await get(parley.owner, "/agents/keeper/memory"))
    assert [n["note"] for n in memory] == ["only this"]


async def test_deferred_actions_without_the_run_s_token_are_refused(
    parley: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """What a node reports for a turn acts with that run's token, like any action: an end
    with another token is not the run's end at all (hub/end_checks.py), and changes nothing."""
    from parley.node.messages import ActionCall, RunEvent, run_outcomes_subject
    from parley.tokens import hash_token

    await parley.hire("napper", brain=script(tmp_path, "napper", "otherwise: [{sleep: 30}]"))
    queued = await say(parley.owner, "napper", "zzz")
    assert await eventually(lambda: _running(parley, queued["run_id"]))
    forged = RunEvent(
        run_id=queued["run_id"],
        kind="finished",
        text="done",
        actions=[ActionCall(name="remember", arguments={"note": "planted"})],
        run_token="prt_not-this-run",
        started_as=hash_token("prt_not-this-run"),
    )
    data = forged.model_dump_json().encode()
    await parley.context.broker.send_durable(run_outcomes_subject("local"), data, "forged")
    await parley.context.runtime.scheduler.caught_up()
    assert await _running(parley, queued["run_id"])
    assert items(await get(parley.owner, "/agents/napper/memory")) == []
    assert f"claiming run {queued['run_id']}: " in caplog.text


async def _running(parley: Harness, run_id: int) -> bool:
    return bool((await get(parley.owner, f"/runs/{run_id}"))["run"]["state"] == "running")


async def test_a_workspace_tool_is_refused_at_the_hub_saying_where_it_acts(
    parley: Harness, tmp_path: Path
) -> None:
    """The hub acts in no workspace: a run's tools act on its node, during its turn (a command
    brain has its own). Refused for every workspace tool, on the list or not, and nothing is
    made in the workspace."""
    run, _ = await _running_token(parley, tmp_path, "boss", "plan the week")
    workspace = Path((await parley.agent("boss"))["workspace"])
    for action, body in (
        ("read", {"path": "token"}),
        ("list", {}),
        ("find", {"text": "x"}),
        ("write", {"path": "made", "content": "x"}),
        ("edit", {"path": "token", "old": "a", "new": "b"}),
        ("run", {"command": "touch made"}),
    ):
        refused = await _act(run, action, **body)
        assert refused["status"] == 403, (action, refused)
        assert "workspace, on its node, during its turn" in refused["message"]
    assert not (workspace / "made").exists()
