"""A person continues a task (issue 30, point 2): its giver and owners write more to an open one,
and the next turn continues the task's session, told so if the last turn was stopped. Members
who did not give it are refused; who may not read it finds no task; an ended task takes no more
text."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx

from tests.runs.support import follow, get, script
from tests.runs.test_stop import SLEEPER
from tests.support import Harness, eventually, items, oldest_first

ECHO = "otherwise: [{reply: 'heard {text} from {sender}'}]"
DONE = "otherwise: [{complete: 'counted'}]"


async def _give(client: httpx.AsyncClient, agent: str, text: str) -> dict[str, Any]:
    response = await client.post("/api/v1/tasks", json={"agent": agent, "text": text})
    assert response.status_code == 201, response.text
    task = response.json()
    assert isinstance(task, dict)
    return task


async def _say(client: httpx.AsyncClient, task_id: int, body: Any) -> httpx.Response:
    return await client.post(f"/api/v1/tasks/{task_id}/messages", json=body)


async def _reply(client: httpx.AsyncClient, answer: httpx.Response) -> str:
    assert answer.status_code == 202, answer.text
    _, end = await follow(client, answer.json()["run_id"])
    assert end["state"] == "finished", end
    output = end["output"]
    assert isinstance(output, str)
    return output


async def _task(parley: Harness, task_id: int) -> dict[str, Any]:
    shown = await get(parley.owner, f"/tasks/{task_id}")
    assert isinstance(shown, dict)
    return shown


async def test_a_stopped_task_continues_its_session_with_the_stop_notice(
    parley: Harness, tmp_path: Path
) -> None:
    program = tmp_path / "sleeper.py"
    program.write_text(SLEEPER)
    agent = await parley.hire("worker", brain=f"command:{sys.executable} {program}")
    pid_file = Path(agent["workspace"]) / "worker.pid"
    task = await _give(parley.owner, "worker", "take a nap")
    assert await eventually(lambda: _written(pid_file))
    stopped = await parley.owner.post(f"/api/v1/tasks/{task['id']}/stop")
    assert len(stopped.json()["stopped"]) == 1

    answer = await _say(parley.owner, task["id"], {"text": "are you there"})
    assert answer.json()["topic_id"] == task["id"]
    said = (await _reply(parley.owner, answer)).splitlines()
    assert said[0] == "stopped-notice" and said[1].endswith("are you there"), said
    shown = await _task(parley, task["id"])
    assert shown["topic"]["status"] == "open"
    runs = oldest_first(shown["runs"])
    assert [r["state"] for r in runs] == ["stopped", "finished"]
    texts = [(m["author"], m["body"]) for m in oldest_first(shown["messages"])]
    assert ("owner", "are you there") in texts


async def _written(path: Path) -> bool:
    return path.exists() and path.read_text().strip() != ""


async def test_the_giver_and_owners_write_to_a_task_and_other_members_are_refused(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("clerk", brain=script(tmp_path, "clerk", ECHO))
    ada, bo = await parley.add_person("ada"), await parley.add_person("bo")
    async with parley.client(ada) as giver, parley.client(bo) as other:
        task = await _give(giver, "clerk", "count the spoons")
        assert await eventually(lambda: _runs_are(parley, task["id"], ["finished"]))
        assert await _reply(giver, await _say(giver, task["id"], {"text": "and forks"})) == (
            "heard and forks from ada"
        )
        owners = await _say(parley.owner, task["id"], {"text": "and knives"})
        assert await _reply(parley.owner, owners) == "heard and knives from owner"
        refused = await _say(other, task["id"], {"text": "and cups"})
        missing = await _say(other, 987654, {"text": "and cups"})
        empty = await _say(giver, task["id"], {"text": ""})
        no_text = await _say(giver, task["id"], {"words": "and cups"})
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        f"only an owner or the person who gave task {task['id']} may write to it"
    )
    assert (missing.status_code, missing.json()["message"]) == (404, "no task 987654")
    assert (empty.status_code, no_text.status_code) == (400, 400)
    assert "text" in empty.json()["message"] and "text" in no_text.json()["message"]
    bodies = [m["body"] for m in items((await _task(parley, task["id"]))["messages"])]
    assert "and cups" not in bodies and "" not in bodies  # nothing refused was kept


async def test_who_may_not_read_a_task_finds_none_and_an_ended_task_takes_no_more_text(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("clerk", brain=script(tmp_path, "clerk", DONE))
    await parley.hire("echo", brain=script(tmp_path, "echo", ECHO))
    ada = await parley.add_person("ada")
    done = await _give(parley.owner, "clerk", "count the spoons")
    assert await eventually(lambda: _status_is(parley, done["id"], "done"))
    deleted = await _give(parley.owner, "echo", "count the forks")
    removed = await parley.owner.delete(f"/api/v1/tasks/{deleted['id']}")
    assert removed.status_code == 204
    async with parley.client(ada) as member:
        hidden = await _say(member, deleted["id"], {"text": "still there?"})
    after_done = await _say(parley.owner, done["id"], {"text": "and the forks"})
    after_delete = await _say(parley.owner, deleted["id"], {"text": "still there?"})
    # A deleted task is the owners' alone: a member gets what a missing task gets.
    assert (hidden.status_code, hidden.json()["message"]) == (404, f"no task {deleted['id']}")
    assert after_done.status_code == 409
    assert after_done.json()["message"] == (
        f"task {done['id']} is done: it takes no more text; give a new task instead"
    )
    assert after_delete.status_code == 409
    assert after_delete.json()["message"].startswith(f"task {deleted['id']} is deleted")
    runs = items((await _task(parley, done["id"]))["runs"])
    assert len(runs) == 1  # nothing more was queued


async def _runs_are(parley: Harness, task_id: int, states: list[str]) -> bool:
    return [r["state"] for r in items((await _task(parley, task_id))["runs"])] == states


async def _status_is(parley: Harness, task_id: int, status: str) -> bool:
    return bool((await _task(parley, task_id))["topic"]["status"] == status)
