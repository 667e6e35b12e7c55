"""People: owners and members, tokens stored hashed, owner-only actions refused to members."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from parley.people.bootstrap import owner_token_path
from tests.support import Harness, items


async def test_first_start_created_the_owner_and_saved_its_token(parley: Harness) -> None:
    me = await parley.owner.get("/api/v1/me")
    assert me.status_code == 200
    assert me.json()["name"] == "owner" and me.json()["role"] == "owner"
    token_file = owner_token_path(parley.context.settings.data_dir)
    assert token_file.stat().st_mode & 0o777 == 0o600


async def test_a_new_person_gets_a_working_token(parley: Harness) -> None:
    token = await parley.add_person("ada", "member")
    async with parley.client(token) as ada:
        me = await ada.get("/api/v1/me")
    assert me.json()["name"] == "ada" and me.json()["role"] == "member"


async def test_tokens_are_stored_only_as_hashes(parley: Harness) -> None:
    token = await parley.add_person("ada")
    async with parley.context.store.transaction() as tx:
        stored = (
            (await tx.connection.execute(text("SELECT token_hash FROM people"))).scalars().all()
        )
    assert token not in stored
    assert all(len(value) == 64 for value in stored)


async def test_a_second_person_with_the_same_name_is_a_conflict(parley: Harness) -> None:
    await parley.add_person("ada")
    response = await parley.owner.post("/api/v1/people", json={"name": "ada", "role": "owner"})
    assert response.status_code == 409
    assert response.json()["message"] == "a person named 'ada' already exists"


@pytest.mark.parametrize("name", ["", "Ada", "1ada", "ada smith", "a" * 41, "ada-", "node:x"])
async def test_invalid_person_names_are_refused(parley: Harness, name: str) -> None:
    response = await parley.owner.post("/api/v1/people", json={"name": name, "role": "member"})
    assert response.status_code == 400
    assert "person name" in response.json()["message"]
    assert [p["name"] for p in items((await parley.owner.get("/api/v1/people")).json())] == [
        "owner"
    ]


async def test_an_unknown_role_is_refused(parley: Harness) -> None:
    response = await parley.owner.post("/api/v1/people", json={"name": "ada", "role": "boss"})
    assert response.status_code == 400
    assert "role" in response.json()["message"]


OWNER_ACTIONS = [
    ("post", "/api/v1/people", {"name": "eve", "role": "owner"}, "add people"),
    ("post", "/api/v1/agents", {"name": "bob", "node": "local"}, "hire agents"),
    ("post", "/api/v1/agents/worker/retire", {}, "retire agents"),
    ("post", "/api/v1/agents/worker/warnings", {"reason": "rude"}, "warn agents"),
    ("post", "/api/v1/agents/worker/reassign", {"node": "local"}, "reassign agents"),
    ("put", "/api/v1/nodes/local/engram", {"engram": "calm"}, "set a node's engram"),
]


@pytest.mark.parametrize(("method", "path", "body", "action"), OWNER_ACTIONS)
async def test_members_cannot_do_owner_things(
    parley: Harness, method: str, path: str, body: dict[str, str], action: str
) -> None:
    await parley.hire("worker")
    token = await parley.add_person("ada", "member")
    async with parley.client(token) as ada:
        response = await ada.request(method.upper(), path, json=body)
    assert response.status_code == 403
    assert response.json() == {
        "error": "forbidden",
        "message": f"only an owner may {action}; ada is a member",
    }
    assert (await parley.agent("worker"))["lifecycle"] == "active"
    people = items((await parley.owner.get("/api/v1/people")).json())
    assert "eve" not in [p["name"] for p in people]


async def test_members_can_read(parley: Harness) -> None:
    await parley.hire("worker")
    token = await parley.add_person("ada", "member")
    async with parley.client(token) as ada:
        assert (await ada.get("/api/v1/agents")).status_code == 200
        assert (await ada.get("/api/v1/nodes")).status_code == 200
        assert (await ada.get("/api/v1/agents/worker")).json()["name"] == "worker"


async def test_a_reissued_token_replaces_the_old_one(parley: Harness) -> None:
    old = await parley.add_person("ada")
    response = await parley.owner.post("/api/v1/people/ada/token")
    assert response.status_code == 200
    new = response.json()["token"]
    async with parley.client(old) as with_old, parley.client(new) as with_new:
        assert (await with_old.get("/api/v1/me")).status_code == 401
        assert (await with_new.get("/api/v1/me")).json()["name"] == "ada"


async def test_a_member_may_reissue_only_their_own_token(parley: Harness) -> None:
    ada = await parley.add_person("ada")
    await parley.add_person("bea")
    async with parley.client(ada) as client:
        other = await client.post("/api/v1/people/bea/token")
        own = await client.post("/api/v1/people/ada/token")
    assert own.status_code == 200
    assert other.status_code == 403
    assert (
        other.json()["message"] == "only an owner may issue another person's token; ada is a member"
    )
