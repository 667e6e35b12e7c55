"""Bindings keep the privacy rule, from outside (the API in process, SQLite and PostgreSQL): an
owner cannot bind a web conversation to a session they or its person may not read — another
person's conversation answers the same 404 as no session at all — nor give a web conversation
a parent it does not have; a web conversation is its person's alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.runs.support import script
from tests.support import Harness, eventually

ECHO = "otherwise: [{reply: 'heard {text}'}]"


async def _ok(client: httpx.AsyncClient, method: str, path: str, **body: Any) -> Any:
    response = await client.request(method, f"/api/v1{path}", json=body or None)
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


def _bind(owner: httpx.AsyncClient, session: str, conversation: int, **more: Any) -> Any:
    body = {"session": session, "channel": "web", "account_id": "home",
            "conversation_id": str(conversation)} | more  # fmt: skip
    return owner.post("/api/v1/bindings", json=body)


async def test_a_web_conversation_binds_only_to_a_session_its_person_and_creator_may_read(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("scribe", brain=script(tmp_path, "scribe", ECHO))
    owner = parley.owner
    await _ok(owner, "PUT", "/channels/web/accounts/home", default_agent="scribe")
    async with parley.client(await parley.add_person("ada")) as ada:
        async with parley.client(await parley.add_person("bea")) as bea:
            secret = await _ok(bea, "POST", "/conversations/scribe/messages", text="my secret")
        mine = await _ok(owner, "POST", "/conversations/scribe/messages", text="owner's own")
        task = await _ok(owner, "POST", "/tasks", agent="scribe", text="shared work")
        place = (await _ok(ada, "POST", "/channels/web/home/conversations", title="mine"))["id"]

        # bea's conversation: no one else reads it, so to the owner it does not exist
        hidden = await _bind(owner, f"topic:{secret['topic_id']}", place)
        absent = await _bind(owner, "topic:99999", place)
        assert (hidden.status_code, absent.status_code) == (404, 404)
        assert hidden.json()["message"] == f"no open session topic:{secret['topic_id']}"
        assert absent.json()["message"] == "no open session topic:99999"
        # the owner's conversation: the owner reads it, ada (the place's person) may not
        shown = await _bind(owner, f"topic:{mine['topic_id']}", place)
        assert shown.status_code == 403
        assert f"would show topic:{mine['topic_id']} to ada, who may not read it" in shown.text
        # a task every person reads: bound, and what ada writes there goes into it
        bound = await _bind(owner, f"topic:{task['id']}", place)
        assert bound.status_code == 201, bound.text
        await _ok(ada, "POST", f"/channels/web/home/conversations/{place}/messages", text="hi")

        async def answered() -> bool:
            shown = await _ok(ada, "GET", f"/channels/web/home/conversations/{place}")
            said = [m["body"] for m in shown["messages"]]  # the task's text and hers, one turn
            return len(said) == 2 and said[1].endswith("heard hi")

        assert await eventually(answered)
        # ada's web conversation is hers alone: the owner neither lists nor reads it
        assert await _ok(owner, "GET", "/channels/web/home/conversations") == []
        read = await owner.get(f"/api/v1/channels/web/home/conversations/{place}")
        assert read.status_code == 404


async def test_a_bogus_parent_conversation_is_refused(parley: Harness) -> None:
    owner = parley.owner
    await parley.hire("scribe")
    said = await _ok(owner, "POST", "/conversations/scribe/messages", text="hello")
    session = f"topic:{said['topic_id']}"
    await _ok(owner, "PUT", "/channels/web/accounts/home", default_agent="scribe")
    main = (await _ok(owner, "POST", "/channels/web/home/conversations", title="main"))["id"]
    other = (await _ok(owner, "POST", "/channels/web/home/conversations", title="other"))["id"]
    thread = await _ok(
        owner, "POST", f"/channels/web/home/conversations/{main}/threads", title="part"
    )
    for conversation in (thread["id"], main):
        refused = await _bind(owner, session, conversation, parent_conversation_id=str(other))
        assert refused.status_code == 400, refused.text
        assert refused.json()["message"] == (
            f"parent_conversation_id: web conversation {conversation} is not a thread of '{other}'"
        )
    assert (await _ok(owner, "GET", "/bindings"))["items"] == []
    # its own parent, or none given (then its own is filled in)
    bound = await _bind(owner, session, thread["id"])
    assert bound.status_code == 201, bound.text
    assert bound.json()["conversation"]["parent_conversation_id"] == str(main)
