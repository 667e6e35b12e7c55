"""Text from a channel conversation, through a recording adapter registered in the registry (a
fake of a remote channel): a linked user's text goes to the account's default agent and the
reply is posted back; a bound conversation's goes to its session; an unknown user is refused
with a post; a post is retried while the channel is away and failed for good, visibly, when it
refuses."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from parley.channels.bindings import SessionBindingService
from parley.channels.inbound import Decided, Refused, receive_from_user, refusal_key
from parley.channels.model import BindingTargetKind, BindRequest, ConversationRef, session_key
from parley.channels.sweeper import sweep_bindings
from parley.errors import Forbidden, NotFound
from parley.runs.queueing import Queued
from tests.channels.recording import RecordingAdapter
from tests.runs.support import script
from tests.support import Harness, eventually

ECHO = "otherwise: [{reply: 'heard {text}'}]"
HALL = ConversationRef("test", "acct", "hall")


@pytest.fixture
def adapter(parley: Harness) -> RecordingAdapter:
    recording = RecordingAdapter()
    registry = parley.context.runtime.channels.registry
    registry.register("test", recording, "acct")
    return recording


async def _ok(parley: Harness, method: str, path: str, **body: Any) -> Any:
    response = await parley.owner.request(method, f"/api/v1{path}", json=body or None)
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


async def _setup(parley: Harness, tmp_path: Path) -> str:
    """scribe, the default agent of test:acct, where user u-ada is ada; ada's token."""
    await parley.hire("scribe", brain=script(tmp_path, "scribe", ECHO))
    await _ok(parley, "PUT", "/channels/test/accounts/acct", default_agent="scribe")
    token = await parley.add_person("ada")
    await _ok(parley, "PUT", "/channels/test/accounts/acct/identities/u-ada", person="ada")
    return token


async def _receive(
    parley: Harness, user: str, message: str, text: str, ref: ConversationRef = HALL
) -> Queued | Refused | Decided:
    async with parley.context.store.transaction() as tx:
        return await receive_from_user(tx, parley.clock, ref, user, message, text)


async def test_a_linked_user_talks_to_the_default_agent_and_hears_back(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    token = await _setup(parley, tmp_path)
    queued = await _receive(parley, "u-ada", "m1", "hello")
    assert isinstance(queued, Queued)
    assert await eventually(lambda: _async(len(adapter.posts) == 1))
    [posted] = adapter.posts
    assert (posted.ref, posted.text, posted.persona) == (HALL, "heard hello", "scribe")
    # the text and the reply are in ada's own conversation with scribe
    async with parley.client(token) as ada:
        shown = (await ada.get("/api/v1/conversations/scribe")).json()
    assert shown["topic"]["id"] == queued.topic_id
    assert [m["body"] for m in shown["messages"]["items"]] == ["heard hello", "hello"]


async def test_an_unknown_user_is_refused_with_a_post_not_silence(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    await _setup(parley, tmp_path)
    refused = await _receive(parley, "u-eve", "m9", "let me in")
    assert isinstance(refused, Refused)
    assert "Parley does not know you (test user u-eve)" in refused.text
    assert "parley channel identity link test acct u-eve PERSON" in refused.text
    assert await _receive(parley, "u-eve", "m9", "let me in") == refused  # the same message again
    assert await eventually(lambda: _async(len(adapter.posts) == 1))
    assert adapter.posts[0].text == refused.text and adapter.posts[0].ref == HALL
    await _ok(parley, "DELETE", "/channels/test/accounts/acct/identities/u-ada")
    assert isinstance(await _receive(parley, "u-ada", "m10", "hi"), Refused)


async def test_a_bound_conversation_talks_to_its_session(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    await _setup(parley, tmp_path)
    first = await _receive(parley, "u-ada", "m1", "hello")
    assert isinstance(first, Queued)
    assert await eventually(lambda: _async(len(adapter.posts) == 1))  # one turn, then the next
    side = ConversationRef("test", "acct", "side", "hall")
    async with parley.context.store.transaction() as tx:
        bound = await SessionBindingService(tx, parley.clock).bind(
            BindRequest(session_key(first.topic_id), BindingTargetKind.SESSION, side, "person:ada"),
            creator=await tx.people.by_name("ada"),
        )
    parley.clock.advance(minutes=3)
    second = await _receive(parley, "u-ada", "m2", "more", ref=side)
    assert isinstance(second, Queued) and second.topic_id == first.topic_id
    assert await eventually(lambda: _async(len(adapter.posts) == 2))
    assert [(p.ref.conversation_id, p.text) for p in adapter.posts] == [
        ("hall", "heard hello"), ("side", "heard more"),
    ]  # fmt: skip
    shown = await _ok(parley, "GET", f"/bindings/{bound.binding_id}")
    assert shown["last_activity_at"] != shown["bound_at"]  # touched by what came and went


async def _bea(parley: Harness) -> None:
    """bea, a member, linked as u-bea on test:acct."""
    await parley.add_person("bea")
    await _ok(parley, "PUT", "/channels/test/accounts/acct/identities/u-bea", person="bea")


async def test_a_binding_takes_only_a_session_every_person_there_may_read(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    await _setup(parley, tmp_path)
    await _bea(parley)
    first = await _receive(parley, "u-ada", "m1", "hello")  # ada's conversation with scribe
    assert isinstance(first, Queued)
    assert isinstance(await _receive(parley, "u-bea", "m2", "hi all", ref=HALL), Queued)
    key = session_key(first.topic_id)

    async def bind(ref: ConversationRef, creator: str) -> None:
        async with parley.context.store.transaction() as tx:
            await SessionBindingService(tx, parley.clock).bind(
                BindRequest(key, BindingTargetKind.SESSION, ref, f"person:{creator}"),
                creator=await tx.people.by_name(creator),
            )

    # the owner may not read ada's conversation: as if it did not exist
    with pytest.raises(NotFound, match=f"^no open session {key}$"):
        await bind(ConversationRef("test", "acct", "side"), "owner")
    # bea wrote in the hall: it would show ada's conversation to her
    with pytest.raises(Forbidden, match=r"test:acct:hall would show .* to bea, who may not"):
        await bind(HALL, "ada")
    await bind(ConversationRef("test", "acct", "side"), "ada")  # only ada is known there


async def test_someone_who_may_not_read_a_bound_session_ends_its_binding(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    token = await _setup(parley, tmp_path)
    await _bea(parley)
    first = await _receive(parley, "u-ada", "m1", "hello")
    assert isinstance(first, Queued)
    assert await eventually(lambda: _async(len(adapter.posts) == 1))
    side = ConversationRef("test", "acct", "side", "hall")
    async with parley.context.store.transaction() as tx:
        bound = await SessionBindingService(tx, parley.clock).bind(
            BindRequest(session_key(first.topic_id), BindingTargetKind.SESSION, side, "ada"),
            creator=await tx.people.by_name("ada"),
        )
    refused = await _receive(parley, "u-bea", "m2", "what did ada say?", ref=side)
    assert isinstance(refused, Refused)
    assert "bea writes here and may not read it" in refused.text
    shown = await _ok(parley, "GET", f"/bindings/{bound.binding_id}")
    assert (shown["status"], shown["ended_reason"]) == ("ended", "privacy")
    assert await eventually(lambda: _async(len(adapter.posts) == 2))
    assert (adapter.posts[1].ref, adapter.posts[1].text) == (side, refused.text)
    async with parley.client(token) as ada:
        shown = (await ada.get(f"/api/v1/topics/{first.topic_id}")).json()
    assert [m["body"] for m in shown["messages"]["items"]] == ["heard hello", "hello"]
    # unbound now: what bea writes there goes to her own conversation, as anywhere
    again = await _receive(parley, "u-bea", "m3", "hello", ref=side)
    assert isinstance(again, Queued) and again.topic_id != first.topic_id


async def test_posts_are_retried_while_away_and_failed_for_good_when_refused(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    token = await _setup(parley, tmp_path)
    adapter.failures = ["transient", "transient"]
    await _receive(parley, "u-ada", "m1", "hello")

    async def attempted(count: int) -> bool:
        return adapter.attempts >= count

    for attempt in (1, 2, 3):
        assert await eventually(lambda count=attempt: attempted(count))  # type: ignore[misc]
        parley.clock.advance(minutes=10)  # past any backoff
        parley.context.runtime.outbox.wake()
    assert await eventually(lambda: _async(len(adapter.posts) == 1))

    async def posts() -> list[Any]:
        items = (await _ok(parley, "GET", "/deliveries"))["items"]
        return [i for i in items if i["kind"] == "channel_post"]

    async def delivered() -> bool:
        return [i["state"] for i in await posts()] == ["delivered"]

    assert await eventually(delivered)  # sent, then settled in a transaction of its own
    [post] = await posts()
    assert (post["state"], post["attempts"]) == ("delivered", 3)
    assert post["last_error"] == "the channel is away for a moment"

    adapter.failures = ["permanent"]
    queued = await _receive(parley, "u-ada", "m2", "again")
    assert isinstance(queued, Queued)

    async def failed() -> list[Any]:
        items = (
            await _ok(
                parley,
                "GET",
                "/deliveries",
            )
        )["items"]
        return [i for i in items if i["kind"] == "channel_post" and i["state"] == "failed"]

    assert await eventually(lambda: _truthy(failed()))
    [gone] = await failed()
    assert gone["last_error"] == "missing permissions to post here"
    async with parley.client(token) as ada:
        topic = (await ada.get(f"/api/v1/topics/{queued.topic_id}")).json()
    notices = [m["body"] for m in topic["messages"]["items"] if m["kind"] == "notice"]
    assert notices == [
        "A post to test:acct:hall was not delivered: missing permissions to post here"
    ]


async def _async(value: bool) -> bool:
    return value


async def _truthy(found: Any) -> bool:
    return bool(await found)


async def test_an_idle_binding_ends_with_a_farewell(
    parley: Harness, tmp_path: Path, adapter: RecordingAdapter
) -> None:
    await _setup(parley, tmp_path)
    first = await _receive(parley, "u-ada", "m1", "hello")
    assert isinstance(first, Queued)
    side = ConversationRef("test", "acct", "side", "hall")
    request = BindRequest(
        session_key(first.topic_id), BindingTargetKind.SESSION, side, "person:ada",
        idle_timeout=timedelta(minutes=5), max_age=timedelta(hours=1),
    )  # fmt: skip
    async with parley.context.store.transaction() as tx:
        ada = await tx.people.by_name("ada")
        bound = await SessionBindingService(tx, parley.clock).bind(request, creator=ada)
    parley.clock.advance(minutes=4)
    assert await sweep_bindings(parley.context.store, parley.clock) == []
    parley.clock.advance(minutes=2)
    assert await sweep_bindings(parley.context.store, parley.clock) == [bound.binding_id]
    shown = await _ok(parley, "GET", f"/bindings/{bound.binding_id}")
    assert (shown["status"], shown["ended_reason"]) == ("ended", "idle-timeout")

    def farewell() -> bool:
        return any(p.ref == side for p in adapter.posts)

    assert await eventually(lambda: _async(farewell()))
    [bye] = [p for p in adapter.posts if p.ref == side]
    assert bye.text == (
        f"This conversation is no longer bound to topic:{first.topic_id}: no one wrote here"
        " for a while (idle-timeout)."
    )
    assert await sweep_bindings(parley.context.store, parley.clock) == []  # once


def test_a_refusal_is_keyed_by_its_message_within_the_outbox_key() -> None:
    long = ConversationRef("test", "a" * 200, "hall")
    assert refusal_key(HALL, "m1") == "refusal:test:acct:m1"
    assert len(refusal_key(long, "m1")) <= 200
    assert refusal_key(long, "m1") != refusal_key(long, "m2")
