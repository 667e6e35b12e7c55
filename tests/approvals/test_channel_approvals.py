"""An approval where the person is, in a channel: the turn's text came from a channel
conversation, so the call asking first is posted there with its exact arguments and how to
answer; ``/approve ID`` or ``/deny ID why`` said there by the person decides it, and the decision
is posted there too, each post once. A channel user Parley does not know, or a person who may
not decide it, decides nothing. Through a recording adapter (a fake of a remote channel)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from parley.channels.inbound import Decided, Refused, receive_from_user
from parley.channels.model import ConversationRef
from parley.errors import Conflict, NotFound
from parley.runs.queueing import Queued
from tests.approvals.test_perimeter import RUN
from tests.channels.recording import RecordingAdapter
from tests.runs.support import get, holding_brain, token_of
from tests.support import Harness, bearer, eventually

HALL = ConversationRef("test", "acct", "hall")


@pytest.fixture
def adapter(parley: Harness) -> RecordingAdapter:
    recording = RecordingAdapter()
    parley.context.runtime.channels.registry.register("test", recording, "acct")
    return recording


async def _ok(parley: Harness, method: str, path: str, **body: Any) -> Any:
    response = await parley.owner.request(method, f"/api/v1{path}", json=body or None)
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


async def _receive(parley: Harness, user: str, message: str, text: str) -> Any:
    async with parley.context.store.transaction() as tx:
        return await receive_from_user(tx, parley.clock, HALL, user, message, text)


async def _asked_from_the_hall(parley: Harness, tmp_path: Path) -> dict[str, Any]:
    """deployer (run, asking first) is test:acct's default agent; ada (u-ada) asks it to
    deploy in the hall and its turn asks before running ``make deploy``."""
    hired = await parley.hire("deployer", brain=holding_brain(tmp_path), tools=["run"])
    await _ok(parley, "PUT", "/channels/test/accounts/acct", default_agent="deployer")
    for person, user in (("ada", "u-ada"), ("bob", "u-bob")):
        await parley.add_person(person)
        await _ok(parley, "PUT", f"/channels/test/accounts/acct/identities/{user}", person=person)
    queued = await _receive(parley, "u-ada", "m1", "deploy please")
    assert isinstance(queued, Queued)
    token = await token_of(hired["workspace"], queued.run_id)
    asked = await parley.owner.post("/api/v1/act/approvals", json=RUN, headers=bearer(token))
    assert asked.status_code == 201, asked.text
    approval: dict[str, Any] = asked.json()["approval"]
    return approval


async def test_the_call_is_posted_where_the_text_came_from_and_approve_there_decides(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    asked = await _asked_from_the_hall(parley, tmp_path)
    number = asked["id"]
    assert await eventually(lambda: _posted(adapter, 1))
    (ask,) = adapter.posts
    assert ask.ref == HALL and ask.persona is None
    assert '{"command": "make deploy"}' in ask.text and "deployer asks to call run" in ask.text
    assert f"/approve {number}" in ask.text and f"/deny {number}" in ask.text
    decided = await _receive(parley, "u-ada", "m2", f"/approve {number}")
    with pytest.raises(Conflict, match=f"approval {number} .* already approved by ada"):
        await _receive(parley, "u-ada", "m3", f"/approve {number}")  # said twice: told, once
    shown = await get(parley.owner, f"/approvals/{number}")
    assert await eventually(lambda: _posted(adapter, 2))
    assert isinstance(decided, Decided) and "approved by ada" in decided.text
    assert shown["state"] == "approved" and shown["decided_by"] == "ada"
    assert adapter.posts[1].text == f"Approval {number} (run for deployer): approved by ada."
    await _quiet()
    assert len(adapter.posts) == 2  # each post once


async def test_deny_with_a_reason_from_the_channel_is_what_the_turn_reads(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    asked = await _asked_from_the_hall(parley, tmp_path)
    decided = await _receive(parley, "u-ada", "m2", f"  /DENY #{asked['id']} not on a Friday ")
    shown = await get(parley.owner, f"/approvals/{asked['id']}")
    assert isinstance(decided, Decided)
    assert shown["state"] == "denied" and shown["reason"] == "not on a Friday"


async def test_who_may_not_decide_it_decides_nothing_from_the_channel(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    asked = await _asked_from_the_hall(parley, tmp_path)
    unknown = await _receive(parley, "u-eve", "m3", f"/approve {asked['id']}")
    with pytest.raises(NotFound, match=f"no approval {asked['id']} waits for you"):
        await _receive(parley, "u-bob", "m4", f"/approve {asked['id']}")
    talk = await _receive(parley, "u-ada", "m5", f"tell me first, then /approve {asked['id']}")
    shown = await get(parley.owner, f"/approvals/{asked['id']}")
    assert isinstance(unknown, Refused) and "does not know you" in unknown.text
    assert isinstance(talk, Queued)  # not a command: text for the agent
    assert shown["state"] == "waiting"


async def _posted(adapter: RecordingAdapter, count: int) -> bool:
    return len(adapter.posts) >= count


async def _quiet() -> None:
    """Time for a second post, were one to come."""
    await asyncio.sleep(0.2)


async def test_in_a_web_conversation_the_post_points_to_the_turns_page(
    parley: Harness, tmp_path: Path
) -> None:
    """The web channel's conversations take no commands: its post says where to answer."""
    hired = await parley.hire("deployer", brain=holding_brain(tmp_path), tools=["run"])
    await _ok(parley, "PUT", "/channels/web/accounts/home", default_agent="deployer")
    made = await _ok(parley, "POST", "/channels/web/home/conversations", title="ops")
    where = f"/channels/web/home/conversations/{made['id']}"
    queued = await _ok(parley, "POST", f"{where}/messages", text="deploy please")
    token = await token_of(hired["workspace"], queued["run_id"])
    asked = await parley.owner.post("/api/v1/act/approvals", json=RUN, headers=bearer(token))
    number = asked.json()["approval"]["id"]

    async def posted() -> list[str]:
        shown = await _ok(parley, "GET", where)
        return [m["body"] for m in shown["messages"] if m["author"] == "parley"]

    assert await eventually(lambda: _has(posted))
    (words,) = await posted()
    assert "on the Turns page of the web page" in words and "/approve" not in words
    assert f"parley approve {number}" in words


async def _has(read: Any) -> bool:
    return bool(await read())
