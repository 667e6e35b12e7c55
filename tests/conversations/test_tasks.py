"""Tasks: created by people, ended by agents (done / failed) or people (cancelled, deleted);
subtasks spawned by runs, whose completion reaches the spawning run exactly once (outbox)."""

from __future__ import annotations

from pathlib import Path

from parley.deliveries.model import DeliveryState
from parley.hub.outbox import OutboxWorker
from parley.settings import Settings
from tests.runs.support import get, script
from tests.support import Harness, ManualClock, delivery_by_key, eventually, items, started

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
    [subtask] = items(shown["subtasks"])
    assert (subtask["agent"], subtask["text"], subtask["status"]) == (
        "worker",
        "do the report",
        "done",
    )
    # The completion arrived once, as new text in the manager's task.
    arrived = [m["body"] for m in items(shown["messages"]) if m["author"] == "worker"]
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
    deliverers = parley.context.runtime.channels.deliverers()  # as the runtime's own worker
    again = OutboxWorker(parley.context.store, parley.clock, deliverers)
    assert (await again.deliver_due()).attempted == 0
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert len([m for m in items(shown["messages"]) if m["author"] == "worker"]) == 1


async def test_a_completion_written_before_a_restart_is_delivered_once_after_it(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    async with started(settings, clock) as first:
        await first.context.runtime.outbox.stop()  # the process stops before delivering
        await first.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await first.hire("worker", brain=script(tmp_path, "worker", WORKER))
        task = await _create(first, "manager", "the minutes")
        assert await eventually(lambda: _has_subtask(first, task["id"]))
        subtask_id = items((await get(first.owner, f"/tasks/{task['id']}"))["subtasks"])[0]["id"]
        assert await eventually(lambda: _status(first, subtask_id, "done"))
        [pending] = await _deliveries(first, "pending")
        assert pending["key"] == f"task:{subtask_id}:run:{await _only_run(first, subtask_id)}"
    for _ in range(2):  # started again on the same data, twice
        async with started(settings, clock) as again:
            assert await eventually(lambda: _status(again, task["id"], "done"))
            shown = await get(again.owner, f"/tasks/{task['id']}")
            assert [m["body"] for m in items(shown["messages"]) if m["author"] == "worker"] == [
                f"subtask {subtask_id} (worker) done: did it"
            ]
            [delivered] = await _deliveries(again, "delivered")
            assert (delivered["key"], delivered["attempts"]) == (pending["key"], 1)


async def _deliveries(parley: Harness, state: str) -> list[dict[str, object]]:
    return items(await get(parley.owner, f"/deliveries?state={state}"))


async def _only_run(parley: Harness, task_id: object) -> object:
    [run] = items((await get(parley.owner, f"/tasks/{task_id}"))["runs"])
    return run["id"]


async def test_a_completion_for_a_deleted_task_is_not_delivered_and_says_why(
    parley: Harness, tmp_path: Path
) -> None:
    gate = tmp_path / "worker may end"
    slow_worker = f"otherwise: [{{wait_for: '{gate}'}}, {{complete: 'late'}}]"
    await parley.hire("manager", brain=script(tmp_path, "manager", MANAGER))
    await parley.hire("worker", brain=script(tmp_path, "worker", slow_worker))
    task = await _create(parley, "manager", "x")
    assert await eventually(lambda: _has_subtask(parley, task["id"]))
    subtask_id = items((await get(parley.owner, f"/tasks/{task['id']}"))["subtasks"])[0]["id"]
    assert (await parley.owner.delete(f"/api/v1/tasks/{task['id']}")).status_code == 204
    gate.touch()  # the worker completes only now, for a task deleted
    assert await eventually(lambda: _status(parley, subtask_id, "done"))
    key = f"task:{subtask_id}:run:{await _only_run(parley, subtask_id)}"
    assert await eventually(lambda: _delivery_state(parley, key, DeliveryState.FAILED))
    assert (await get(parley.owner, f"/tasks/{task['id']}"))["topic"]["closed_at"] is not None
    # Its reason code beside its words (issue 30, point 17).
    why = "thread: the topic it answers was closed (task deleted by owner)"
    # Its fate is in the subtask's own log, and in the delivery list with the reason.
    subtask = await get(parley.owner, f"/tasks/{subtask_id}")
    notices = [m["body"] for m in items(subtask["messages"]) if m["kind"] == "notice"]
    assert notices == [f"This task's result was not delivered to manager: {why}"]
    [failed] = await _deliveries(parley, "failed")
    assert (failed["key"], failed["kind"], failed["attempts"]) == (key, "task_completion", 1)
    assert (failed["last_error"], failed["next_attempt_at"]) == (why, None)


async def test_a_completion_for_a_retired_spawner_fails_visibly(
    parley: Harness, tmp_path: Path
) -> None:
    gate = tmp_path / "worker may end"
    slow_worker = f"otherwise: [{{wait_for: '{gate}'}}, {{complete: 'late'}}]"
    await parley.hire("manager", brain=script(tmp_path, "manager", MANAGER))
    await parley.hire("worker", brain=script(tmp_path, "worker", slow_worker))
    task = await _create(parley, "manager", "x")
    assert await eventually(lambda: _has_subtask(parley, task["id"]))
    subtask_id = items((await get(parley.owner, f"/tasks/{task['id']}"))["subtasks"])[0]["id"]
    retired = await parley.owner.post("/api/v1/agents/manager/retire", json={"force": True})
    assert retired.status_code == 200, retired.text
    gate.touch()  # the worker completes only now, for a spawner retired
    assert await eventually(lambda: _status(parley, subtask_id, "done"))
    key = f"task:{subtask_id}:run:{await _only_run(parley, subtask_id)}"
    assert await eventually(lambda: _delivery_state(parley, key, DeliveryState.FAILED))
    subtask = await get(parley.owner, f"/tasks/{subtask_id}")
    notices = [m["body"] for m in items(subtask["messages"]) if m["kind"] == "notice"]
    why = "manager takes no more work (retired)"
    assert notices == [f"This task's result was not delivered to manager: {why}"]


async def test_a_subtask_cancelled_by_a_person_is_keyed_by_that_person(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("manager", brain=script(tmp_path, "manager", MANAGER))
    await parley.hire("worker", brain=script(tmp_path, "worker", "otherwise: [{sleep: 30}]"))
    task = await _create(parley, "manager", "x")
    assert await eventually(lambda: _has_subtask(parley, task["id"]))
    subtask_id = items((await get(parley.owner, f"/tasks/{task['id']}"))["subtasks"])[0]["id"]
    cancelled = await parley.owner.post(f"/api/v1/tasks/{subtask_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    owner_id = await _person_id(parley, "owner")
    key = f"task:{subtask_id}:person:{owner_id}"
    assert await eventually(lambda: _delivery_state(parley, key, DeliveryState.DELIVERED))
    assert await eventually(lambda: _status(parley, task["id"], "done"))
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert shown["topic"]["result"] == "worker said cancelled by owner (cancelled)"


async def _person_id(parley: Harness, name: str) -> int:
    async with parley.context.store.transaction() as tx:
        person = await tx.people.by_name(name)
    assert person is not None
    return person.id


async def _has_subtask(parley: Harness, task_id: object) -> bool:
    return bool(items((await get(parley.owner, f"/tasks/{task_id}"))["subtasks"]))


async def _delivery_state(parley: Harness, key: str, state: DeliveryState) -> bool:
    async with parley.context.store.transaction() as tx:
        item = await delivery_by_key(tx, key)
    return item is not None and item.state is state


async def test_tasks_are_listed_shown_cancelled_and_deleted(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("napper", brain=script(tmp_path, "napper", "otherwise: [{sleep: 30}]"))
    task = await _create(parley, "napper", "long job")
    listed = await get(parley.owner, "/tasks?status=open")
    assert [t["id"] for t in items(listed)] == [task["id"]]
    ada = parley.client(await parley.add_person("ada"))
    assert (await ada.get(f"/api/v1/tasks/{task['id']}")).status_code == 200  # members read tasks
    refused = await ada.delete(f"/api/v1/tasks/{task['id']}")
    assert refused.status_code == 403
    cancelled = await parley.owner.post(f"/api/v1/tasks/{task['id']}/cancel")
    assert cancelled.json()["status"] == "cancelled"
    runs = items((await get(parley.owner, f"/tasks/{task['id']}"))["runs"])
    assert [r["state"] for r in runs] == ["stopped"]
    assert task["run_id"] == runs[0]["id"]  # giving it named the run that took its text
    again = await parley.owner.post(f"/api/v1/tasks/{task['id']}/cancel")
    assert again.status_code == 409
    assert (await parley.owner.delete(f"/api/v1/tasks/{task['id']}")).status_code == 204
    gone = await ada.get(f"/api/v1/tasks/{task['id']}")
    assert (gone.status_code, gone.json()["message"]) == (404, f"no task {task['id']}")
    assert items(await get(parley.owner, "/tasks")) == []
    # Its history stays for owners.
    kept = await get(parley.owner, f"/tasks/{task['id']}")
    assert kept["topic"]["closed_reason"] == "task deleted by owner"
    assert [t["id"] for t in items(await get(parley.owner, "/tasks?deleted=true"))] == [task["id"]]
    assert items(await get(ada, "/tasks?deleted=true")) == []  # a deleted task is the owners'
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
    assert items(await get(parley.owner, "/tasks")) == []


async def test_complete_outside_a_task_is_refused(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("a", brain=script(tmp_path, "a", "otherwise: [{complete: 'x'}]"))
    from tests.runs.support import say_and_wait

    end = await say_and_wait(parley, "a", "hi")
    assert end["state"] == "failed"
    assert "complete ends a task; this run answers owner's conversation with a" in end["reason"]
