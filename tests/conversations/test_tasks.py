"""Tasks: created by people, ended by agents (done / failed) or people (cancelled, deleted);
subtasks spawned by runs, whose completion reaches the spawning run exactly once (outbox)."""

from __future__ import annotations

from pathlib import Path

from parley.hub.outbox import OutboxWorker
from tests.runs.support import get, script
from tests.support import Harness, eventually

MANAGER = """
    rules:
      - when: {text: "^subtask \\\\d+ \\\\(worker\\\\) (?P<status>\\\\w+): (?P<result>.*)$"}
        do: [{complete: "worker said {result} ({status})"}]
    otherwise:
      - spawn: {agent: worker, text: "do {text}"}
"""
WORKER = """
    rules:
      - when: {text: "fail"}
        do: [{complete: {result: "could not", failed: true}}]
    otherwise:
      - complete: "did it"
"""


async def _create(parley: Harness, agent: str, text: str) -> dict[str, object]:
    response = await parley.owner.post("/api/v1/tasks", json={"agent": agent, "text": text})
    assert response.status_code == 201, response.text
    task = response.json()
    assert isinstance(task, dict)
    return task


async def _status(parley: Harness, task_id: object, status: str) -> bool:
    return bool((await get(parley.owner, f"/tasks/{task_id}"))["topic"]["status"] == status)


async def test_a_subtask_s_completion_reaches_the_run_that_spawned_it(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("manager", brain=script(tmp_path, "manager", MANAGER))
    await parley.hire("worker", brain=script(tmp_path, "worker", WORKER))
    task = await _create(parley, "manager", "the report")
    assert await eventually(lambda: _status(parley, task["id"], "done"))
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert shown["topic"]["result"] == "worker said did it (done)"
    [subtask] = shown["subtasks"]
    assert (subtask["agent"], subtask["text"], subtask["status"]) == (
        "worker",
        "do the report",
        "done",
    )
    # The completion arrived once, as new text in the manager's task.
    arrived = [m["body"] for m in shown["messages"] if m["author"] == "worker"]
    assert arrived == [f"subtask {subtask['id']} (worker) done: did it"]
    assert (await get(parley.owner, f"/tasks/{subtask['id']}"))["topic"]["person"] is None


async def test_a_failed_subtask_is_reported_as_failed(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("manager", brain=script(tmp_path, "manager", MANAGER))
    await parley.hire("worker", brain=script(tmp_path, "worker", WORKER))
    task = await _create(parley, "manager", "fail please")
    assert await eventually(lambda: _status(parley, task["id"], "done"))
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert shown["topic"]["result"] == "worker said could not (failed)"


async def test_the_outbox_delivers_once_even_when_run_again(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("manager", brain=script(tmp_path, "manager", MANAGER))
    await parley.hire("worker", brain=script(tmp_path, "worker", WORKER))
    task = await _create(parley, "manager", "once")
    assert await eventually(lambda: _status(parley, task["id"], "done"))
    # A second worker over the same store (as after a restart) finds nothing left to deliver.
    again = OutboxWorker(parley.context.store, parley.clock)
    assert await again.deliver_pending() == 0
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert len([m for m in shown["messages"] if m["author"] == "worker"]) == 1


async def test_a_completion_for_a_deleted_task_is_not_delivered_and_says_why(
    parley: Harness, tmp_path: Path
) -> None:
    slow_worker = "otherwise: [{sleep: 0.3}, {complete: 'late'}]"
    await parley.hire("manager", brain=script(tmp_path, "manager", MANAGER))
    await parley.hire("worker", brain=script(tmp_path, "worker", slow_worker))
    task = await _create(parley, "manager", "x")
    assert await eventually(lambda: _has_subtask(parley, task["id"]))
    subtask_id = (await get(parley.owner, f"/tasks/{task['id']}"))["subtasks"][0]["id"]
    assert (await parley.owner.delete(f"/api/v1/tasks/{task['id']}")).status_code == 204
    assert await eventually(lambda: _status(parley, subtask_id, "done"))
    assert await eventually(lambda: _outbox_state(parley, f"task:{subtask_id}:end", "failed"))
    assert (await get(parley.owner, f"/tasks/{task['id']}"))["topic"]["closed_at"] is not None


async def _has_subtask(parley: Harness, task_id: object) -> bool:
    return bool((await get(parley.owner, f"/tasks/{task_id}"))["subtasks"])


async def _outbox_state(parley: Harness, key: str, state: str) -> bool:
    async with parley.context.store.transaction() as tx:
        return await tx.outbox.state_of(key) == state


async def test_tasks_are_listed_shown_cancelled_and_deleted(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("napper", brain=script(tmp_path, "napper", "otherwise: [{sleep: 30}]"))
    task = await _create(parley, "napper", "long job")
    listed = await get(parley.owner, "/tasks?status=open")
    assert [t["id"] for t in listed] == [task["id"]]
    ada = parley.client(await parley.add_person("ada"))
    assert (await ada.get(f"/api/v1/tasks/{task['id']}")).status_code == 200  # members read tasks
    refused = await ada.delete(f"/api/v1/tasks/{task['id']}")
    assert refused.status_code == 403
    cancelled = await parley.owner.post(f"/api/v1/tasks/{task['id']}/cancel")
    assert cancelled.json()["status"] == "cancelled"
    runs = (await get(parley.owner, f"/tasks/{task['id']}"))["runs"]
    assert [r["state"] for r in runs] == ["stopped"]
    again = await parley.owner.post(f"/api/v1/tasks/{task['id']}/cancel")
    assert again.status_code == 409
    assert (await parley.owner.delete(f"/api/v1/tasks/{task['id']}")).status_code == 204
    gone = await ada.get(f"/api/v1/tasks/{task['id']}")
    assert (gone.status_code, gone.json()["message"]) == (404, f"no task {task['id']}")
    assert await get(parley.owner, "/tasks") == []
    # Its history stays for owners.
    kept = await get(parley.owner, f"/tasks/{task['id']}")
    assert kept["topic"]["closed_reason"] == "task deleted by owner"
    assert [t["id"] for t in await get(parley.owner, "/tasks?deleted=true")] == [task["id"]]
    assert (await ada.get("/api/v1/tasks?deleted=true")).status_code == 403
    assert (await parley.owner.get("/api/v1/tasks?status=bogus")).status_code == 400


async def test_bad_task_input_is_refused_clearly(parley: Harness) -> None:
    await parley.hire("a")
    for body, expected in (
        ({"agent": "a", "text": "   "}, "the task is empty"),
        ({"agent": "ghost", "text": "x"}, "no agent named 'ghost'"),
        ({"agent": "a"}, "text: Field required"),
        ({"agent": "a", "text": "x", "root": 1}, "root: Extra inputs are not permitted"),
    ):
        response = await parley.owner.post("/api/v1/tasks", json=body)
        assert response.status_code in (400, 404), response.text
        assert expected in response.json()["message"]
    assert await get(parley.owner, "/tasks") == []


async def test_complete_outside_a_task_is_refused(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("a", brain=script(tmp_path, "a", "otherwise: [{complete: 'x'}]"))
    from tests.runs.support import say_and_wait

    end = await say_and_wait(parley, "a", "hi")
    assert end["state"] == "failed"
    assert "complete ends a task; this run answers owner's conversation with a" in end["reason"]
