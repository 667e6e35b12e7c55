"""Agent memory: append-only, timestamped, who wrote it, readable after retirement."""

from __future__ import annotations

import pytest

from tests.support import Harness


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
    notes = (await parley.owner.get("/api/v1/agents/scribe/memory")).json()
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
    notes = (await parley.owner.get("/api/v1/agents/scribe/memory")).json()
    assert [n["note"] for n in notes] == ["kept"]


@pytest.mark.parametrize("note", ["", "  \n ", "x" * 20_001])
async def test_empty_or_huge_notes_are_refused(parley: Harness, note: str) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post("/api/v1/agents/scribe/memory", json={"note": note})
    assert response.status_code == 400
    assert (await parley.owner.get("/api/v1/agents/scribe/memory")).json() == []


async def test_memory_of_an_unknown_agent_is_404(parley: Harness) -> None:
    assert (await parley.owner.get("/api/v1/agents/ghost/memory")).status_code == 404
