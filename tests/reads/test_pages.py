"""Keyset pages: walking a list with ``before`` yields every row the reader may read exactly once
and in order, also when rows are added between pages; every page but the last is full however
many unreadable rows lie between; limits and cursors are checked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from parley.agents.memory import remember
from parley.conversations.person import say
from parley.conversations.tasks import create_task
from parley.people.accounts import add_person
from parley.people.model import Person, Role
from parley.runs.model import RunState
from parley.store import Tx
from tests.reads.build import hire_idle_agents
from tests.runs.support import get
from tests.served import Served
from tests.support import Harness, items

Add = Callable[[Harness], Awaitable[None]]


async def _person(parley: Harness, name: str) -> Person:
    async with parley.context.store.transaction() as tx:
        found = await tx.people.by_name(name)
    assert found is not None
    return found


async def _add_task(parley: Harness) -> None:
    async with parley.context.store.transaction() as tx:
        await create_task(tx, parley.clock, await _person_in(tx, "owner"), "w0", "more work")


async def _add_person(parley: Harness) -> None:
    count = len(items(await get(parley.owner, "/people?limit=500")))
    async with parley.context.store.transaction() as tx:
        await add_person(tx, parley.clock, f"z{count:03d}", Role.MEMBER)  # after the rest


async def _add_note(parley: Harness) -> None:
    async with parley.context.store.transaction() as tx:
        await remember(tx, parley.clock, "w0", "one more thing", None)


async def _add_text(parley: Harness) -> None:
    async with parley.context.store.transaction() as tx:
        await say(tx, parley.clock, await _person_in(tx, "owner"), "w1", "and another")


async def _person_in(tx: Tx, name: str) -> Person:
    found = await tx.people.by_name(name)
    assert found is not None
    return found


async def _world(parley: Harness) -> tuple[int, str]:
    """Rows of every kind, several pages of each, with a member's private runs in between.
    Returns the id of the owner's conversation with w1, and the member's token."""
    await hire_idle_agents(parley)
    async with parley.context.store.transaction() as tx:
        created = await add_person(tx, parley.clock, "ada", Role.MEMBER)
    ada = created.person
    for n in range(7):
        await _add_task(parley)
        await _add_person(parley)
        await _add_note(parley)
        async with parley.context.store.transaction() as tx:
            private = await say(tx, parley.clock, ada, "w0", f"private {n}")  # not the owner's
            said = await say(tx, parley.clock, await _person_in(tx, "owner"), "w1", f"text {n}")
            for queued in (private, said):  # ended, so that the next text makes a new run
                await tx.runs.finish(queued.run_id, RunState.FINISHED, parley.clock.now())
    shown = await get(parley.owner, "/conversations/w1")
    return int(shown["topic"]["id"]), created.token


LISTS: list[tuple[str, Add, bool]] = [
    # path, how a row is added, whether a new row sorts after the ones already listed
    ("/runs", _add_task, False),
    ("/runs?agent=w0", _add_task, False),
    ("/tasks", _add_task, False),
    ("/people", _add_person, True),
    ("/agents/w0/memory", _add_note, False),
    ("/topics/{conversation}/messages", _add_text, False),
]


@pytest.mark.parametrize(("path", "add", "sorts_after"), LISTS)
async def test_walking_the_pages_yields_each_row_once_in_order(
    parley: Harness, path: str, add: Add, sorts_after: bool
) -> None:
    conversation, _ = await _world(parley)
    path = path.format(conversation=conversation)
    key = "name" if path == "/people" else "id"
    everything = [row[key] for row in items(await get(parley.owner, _with(path, limit=500)))]
    assert len(everything) >= 7

    walked: list[Any] = []
    page = await get(parley.owner, _with(path, limit=3))
    while True:
        assert len(page["items"]) == 3 or page["next"] is None  # full, unless the last
        walked += [row[key] for row in page["items"]]
        if page["next"] is None:
            break
        await add(parley)  # rows added meanwhile do not shift the pages
        page = await get(parley.owner, _with(path, limit=3, before=page["next"]))
    assert len(walked) == len(set(walked))
    assert walked == sorted(walked, reverse=key == "id")
    if sorts_after:
        assert walked[: len(everything)] == everything  # the new names come after, in order
    else:
        assert walked == everything  # the new rows are newer than the first page


async def test_a_page_of_runs_is_full_of_readable_runs(parley: Harness) -> None:
    """Ada's private runs lie between the owner's: the limit counts what the owner may read."""
    _, ada = await _world(parley)
    owners = [r["id"] for r in items(await get(parley.owner, "/runs?limit=500"))]
    adas = [r["id"] for r in items(await get(parley.client(ada), "/runs?limit=500"))]
    hers = set(adas) - set(owners)  # her conversation's runs
    assert len(hers) == 7 and min(owners[:5]) < max(hers)  # among the owner's newest
    page = await get(parley.owner, "/runs?limit=5")
    assert [r["id"] for r in page["items"]] == owners[:5]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=0", "limit: Input should be greater than or equal to 1"),
        ("limit=501", "limit: Input should be less than or equal to 500"),
        ("limit=many", "limit: Input should be a valid integer"),
        ("before=nonsense", "before: 'nonsense' is not a cursor of the runs list"),
    ],
)
async def test_a_bad_limit_or_cursor_is_a_clear_400(
    parley: Harness, query: str, message: str
) -> None:
    response = await parley.owner.get(f"/api/v1/runs?{query}")
    assert response.status_code == 400
    assert message in response.json()["message"]


async def test_a_cursor_of_another_list_is_refused(parley: Harness) -> None:
    await _world(parley)
    tasks_cursor = (await get(parley.owner, "/tasks?limit=1"))["next"]
    response = await parley.owner.get("/api/v1/runs", params={"before": tasks_cursor})
    assert response.status_code == 400
    assert "is not a cursor of the runs list" in response.json()["message"]


def _with(path: str, **params: Any) -> str:
    query = "&".join(f"{name}={value}" for name, value in params.items())
    return f"{path}{'&' if '?' in path else '?'}{query}"


def test_the_cli_says_how_to_read_on(served: Served) -> None:
    for n in range(3):
        assert served.run("person", "add", f"p{n}", "--member").exit_code == 0
    first = served.run("person", "list", "--limit", "2")
    assert first.exit_code == 0, first.output
    assert "owner" in first.stdout and "p0" in first.stdout and "p1" not in first.stdout
    hint = first.stdout.strip().splitlines()[-1]
    assert hint.startswith("more: --before ")
    rest = served.run("person", "list", "--limit", "2", "--before", hint.split()[-1])
    assert "p1" in rest.stdout and "p2" in rest.stdout
    assert "owner" not in rest.stdout and "more:" not in rest.stdout
    page = served.run("person", "list", "--limit", "2", "--json")
    assert '"next": "' in page.stdout and '"items": [' in page.stdout
    refused = served.run("person", "list", "--limit", "0")
    assert (refused.exit_code, "limit" in refused.stderr) == (2, True)


def test_http_walk_over_a_real_server(served: Served) -> None:
    """The same cursor, passed through a real HTTP server and back."""
    headers = {"Authorization": f"Bearer {served.owner_token}"}
    with httpx.Client(base_url=f"{served.url}/api/v1", headers=headers) as api:
        for n in range(4):
            api.post("/people", json={"name": f"q{n}", "role": "member"}).raise_for_status()
        names: list[str] = []
        params: dict[str, Any] = {"limit": 2}
        while True:
            page = api.get("/people", params=params).json()
            names += [p["name"] for p in page["items"]]
            if page["next"] is None:
                break
            params["before"] = page["next"]
    assert names == ["owner", "q0", "q1", "q2", "q3"]
