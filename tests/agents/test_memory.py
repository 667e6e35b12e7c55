"""Agent memory: append-only, timestamped, who wrote it (a person, or a run and where it was
working: memory is read by every member, whatever the run answered for), readable after
retirement."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runs.support import follow, get, say, script
from tests.support import Harness, eventually, items, oldest_first


async def test_notes_are_kept_in_order_with_time_and_author(parley: Harness) -> None:
    await parley.hire("scribe")
    token = await parley.add_person("ada")
    await parley.owner.post(
        "/api/v1/agents/scribe/memory", json={"note": "the client prefers email"}
    )
    parley.clock.advance(minutes=5)
    async with parley.client(token) as ada:
        response = await ada.post(
            "/api/v1/agents/scribe/memory", json={"note": "deadline is friday"}
        )
    assert response.status_code == 201
    assert response.json()["note"] == "deadline is friday"
    notes = oldest_first((await parley.owner.get("/api/v1/agents/scribe/memory")).json())
    assert [(n["note"], n["written_by"]) for n in notes] == [
        ("the client prefers email", "owner"),
        ("deadline is friday", "ada"),
    ]
    assert notes[0]["written_at"] < notes[1]["written_at"]


async def test_a_retired_agents_memory_is_closed_but_readable(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.owner.post("/api/v1/agents/scribe/memory", json={"note": "kept"})
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    response = await parley.owner.post("/api/v1/agents/scribe/memory", json={"note": "too late"})
    assert response.status_code == 409
    notes = items((await parley.owner.get("/api/v1/agents/scribe/memory")).json())
    assert [n["note"] for n in notes] == ["kept"]


@pytest.mark.parametrize("note", ["", "  \n ", "x" * 20_001])
async def test_empty_or_huge_notes_are_refused(parley: Harness, note: str) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/memory", json={"note": note})
    assert response.status_code == 400
    assert items((await parley.owner.get("/api/v1/agents/scribe/memory")).json()) == []


async def test_memory_of_an_unknown_agent_is_404(parley: Harness) -> None:
    assert (await parley.owner.get("/api/v1/agents/ghost/memory")).status_code == 404


async def test_each_note_shows_its_origin_a_person_or_a_run_and_where_it_worked(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("keeper", brain=script(tmp_path, "keeper", "otherwise: [remember: '{text}']"))
    await parley.hire(
        "asker", brain=script(tmp_path, "asker", "otherwise: [send: {to: keeper, text: relayed}]")
    )
    await parley.owner.post("/api/v1/agents/keeper/memory", json={"note": "by hand"})
    chat = await say(parley.owner, "keeper", "in a chat")
    assert (await follow(parley.owner, chat["run_id"]))[1]["state"] == "finished"
    await parley.owner.post("/api/v1/tasks", json={"agent": "keeper", "text": "in a task"})
    await say(parley.owner, "asker", "pass it on")
    assert await eventually(lambda: _notes(parley, "keeper", 4))
    keepers_runs = {r["id"] for r in items(await get(parley.owner, "/runs?agent=keeper"))}
    notes = items(await get(parley.owner, "/agents/keeper/memory"))
    by_note = {n["note"]: n for n in notes}
    assert (by_note["by hand"]["written_by"], by_note["by hand"]["run_id"]) == ("owner", None)
    assert by_note["by hand"]["origin"] == "person owner"
    assert by_note["in a chat"]["run_id"] == chat["run_id"]
    assert by_note["in a chat"]["topic_kind"] == "conversation"
    assert by_note["in a chat"]["origin"] == f"run {chat['run_id']} in a person's conversation"
    assert by_note["in a task"]["topic_kind"] == "task"
    assert by_note["relayed"]["topic_kind"] == "agent_conversation"
    assert by_note["relayed"]["origin"].endswith("in an agent conversation")
    assert {n["run_id"] for n in notes if n["run_id"]} == keepers_runs
    assert all(n["written_by"] is None for n in notes if n["run_id"] is not None)


async def _notes(parley: Harness, agent: str, count: int) -> bool:
    return len(items(await get(parley.owner, f"/agents/{agent}/memory"))) >= count
