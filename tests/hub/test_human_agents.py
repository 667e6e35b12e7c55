"""Human agents: their turn is a notice to their person; the answer ends it."""

from __future__ import annotations

from pathlib import Path

from tests.runs.support import follow, get, say, script
from tests.support import Harness, eventually, items, oldest_first


async def test_a_human_agent_s_turn_waits_for_its_person_and_their_answer_ends_it(
    parley: Harness, tmp_path: Path
) -> None:
    ada_token = await parley.add_person("ada")
    ada = parley.client(ada_token)
    await parley.hire("ada-desk", human="ada")
    queued = await say(parley.owner, "ada-desk", "can you sign this?")
    assert await eventually(lambda: _waiting(ada, 1))
    [turn] = items(await get(ada, "/me/turns"))
    assert turn["run"]["id"] == queued["run_id"]
    assert [m["body"] for m in turn["input"]] == ["can you sign this?"]
    assert items(await get(parley.owner, "/me/turns")) == []  # a notice to ada only

    refused = await parley.owner.post(f"/api/v1/runs/{queued['run_id']}/answer", json={"text": "x"})
    assert refused.status_code == 404
    answered = await ada.post(f"/api/v1/runs/{queued['run_id']}/answer", json={"text": "signed"})
    assert answered.status_code == 200, answered.text
    _, end = await follow(parley.owner, queued["run_id"])
    assert (end["state"], end["output"]) == ("finished", "signed")
    again = await ada.post(f"/api/v1/runs/{queued['run_id']}/answer", json={"text": "twice"})
    assert again.status_code == 409
    shown = await get(parley.owner, "/conversations/ada-desk")
    assert [m["body"] for m in oldest_first(shown["messages"])] == ["can you sign this?", "signed"]


async def test_an_agent_can_hand_a_subtask_to_a_human_agent(
    parley: Harness, tmp_path: Path
) -> None:
    ada = parley.client(await parley.add_person("ada"))
    await parley.hire("ada-desk", human="ada")
    rules = """
        rules:
          - when: {from: ada-desk}
            do: [{complete: "{text}"}]
        otherwise: [{spawn: {agent: ada-desk, text: "please approve"}}]
    """
    await parley.hire("clerk", brain=script(tmp_path, "clerk", rules))
    task = (await parley.owner.post("/api/v1/tasks", json={"agent": "clerk", "text": "go"})).json()
    assert await eventually(lambda: _waiting(ada, 1))
    [turn] = items(await get(ada, "/me/turns"))
    body = {"text": "approved", "complete": True}
    await ada.post(f"/api/v1/runs/{turn['run']['id']}/answer", json=body)
    assert await eventually(lambda: _done(parley, task["id"]))
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert (
        shown["topic"]["result"]
        == f"subtask {items(shown['subtasks'])[0]['id']} (ada-desk) done: approved"
    )


async def _done(parley: Harness, task_id: int) -> bool:
    return bool((await get(parley.owner, f"/tasks/{task_id}"))["topic"]["status"] == "done")


async def _waiting(client: object, count: int) -> bool:
    import httpx

    assert isinstance(client, httpx.AsyncClient)
    return len(items(await get(client, "/me/turns"))) == count
