"""Session bindings in the store (SQLite and PostgreSQL): bind, find by session and by
conversation, touch, unbind by binding or by session with a reason; one live binding per
conversation; a deleted topic takes its bindings with it in the same transaction."""

from __future__ import annotations

from datetime import timedelta

import pytest

from parley.channels.bindings import SessionBindingService
from parley.channels.model import (
    BindingStatus,
    BindingTargetKind,
    BindRequest,
    ConversationRef,
    session_key,
)
from parley.errors import Conflict, Invalid, NotFound
from parley.people.model import Person
from parley.store import Tx
from tests.support import Harness, eventually

MAIN = ConversationRef("test", "acct", "c1")  # a remote channel's: no one has written there yet
THREAD = ConversationRef("test", "acct", "t1", "c1")


async def _conversation(parley: Harness) -> int:
    await parley.hire("scribe")
    said = await parley.owner.post("/api/v1/conversations/scribe/messages", json={"text": "hi"})
    assert said.status_code == 202, said.text
    topic_id: int = said.json()["topic_id"]

    async def answered() -> bool:
        # Its turn over first: a conversation deleted while its reply is being recorded is
        # another matter, not what these tests are about.
        shown = (await parley.owner.get("/api/v1/conversations/scribe")).json()
        return any(m["kind"] == "reply" for m in shown["messages"]["items"])

    assert await eventually(answered)
    return topic_id


async def _owner(tx: Tx) -> Person:
    found = await tx.people.by_name("owner")
    assert found is not None
    return found


def _request(
    topic_id: int,
    ref: ConversationRef = THREAD,
    ttl: timedelta | None = None,
    max_age: timedelta | None = None,
) -> BindRequest:
    return BindRequest(
        session_key(topic_id), BindingTargetKind.SESSION, ref, "person:owner", ttl, max_age=max_age
    )


async def test_bind_find_touch_and_unbind(parley: Harness) -> None:
    topic_id = await _conversation(parley)
    store, clock = parley.context.store, parley.clock
    async with store.transaction() as tx:
        bound = await SessionBindingService(tx, clock).bind(
            _request(topic_id, ttl=timedelta(hours=2), max_age=timedelta(hours=1)),
            creator=await _owner(tx),
        )
    assert bound.expires_at == clock.now() + timedelta(hours=1)  # the shorter of the two
    assert (bound.status, bound.bound_by) == (BindingStatus.ACTIVE, "person:owner")
    clock.advance(minutes=5)
    async with store.transaction() as tx:
        bindings = SessionBindingService(tx, clock)
        assert await tx.bindings.live_by_session(session_key(topic_id)) == [bound]
        # the same place, whatever the lookup says of its parent
        assert (
            await bindings.resolve_by_conversation(ConversationRef("test", "acct", "t1")) == bound
        )
        assert await bindings.resolve_by_conversation(MAIN) is None
        await bindings.touch(bound.binding_id)
    async with store.transaction() as tx:
        bindings = SessionBindingService(tx, clock)
        touched = await bindings.by_id(bound.binding_id)
        assert touched.last_activity_at == clock.now()
        [ended] = await bindings.unbind("done here", binding_id=bound.binding_id)
        assert await bindings.unbind("again", binding_id=bound.binding_id) == []
        assert await tx.bindings.live_by_session(session_key(topic_id)) == []
    assert (ended.status, ended.ended_reason, ended.ended_at) == (
        BindingStatus.ENDED, "done here", clock.now(),
    )  # fmt: skip


async def test_one_live_binding_per_conversation(parley: Harness) -> None:
    topic_id = await _conversation(parley)
    store, clock = parley.context.store, parley.clock
    async with store.transaction() as tx:
        first = await SessionBindingService(tx, clock).bind(
            _request(topic_id), creator=await _owner(tx)
        )
    with pytest.raises(Conflict, match=r"test:acct:t1 .*is bound already \(binding 1"):
        async with store.transaction() as tx:
            await SessionBindingService(tx, clock).bind(
                _request(topic_id), creator=await _owner(tx)
            )
    async with store.transaction() as tx:
        bindings = SessionBindingService(tx, clock)
        await bindings.bind(_request(topic_id, MAIN), creator=await _owner(tx))
        ended = await bindings.unbind("moving on", target_session_key=session_key(topic_id))
        assert [b.conversation for b in ended] == [THREAD, MAIN]
        # once ended, the conversation may be bound again
        again = await bindings.bind(_request(topic_id), creator=await _owner(tx))
    assert again.binding_id != first.binding_id


async def test_bad_binds_and_unbinds_are_refused(parley: Harness) -> None:
    topic_id = await _conversation(parley)
    store, clock = parley.context.store, parley.clock
    async with store.transaction() as tx:
        bindings = SessionBindingService(tx, clock)
        with pytest.raises(NotFound, match="no open session topic:999"):
            await bindings.bind(_request(999), creator=await _owner(tx))
        with pytest.raises(Invalid, match="not a session key"):
            await bindings.unbind("x", target_session_key="run:4")
        with pytest.raises(Invalid, match="a binding or a session, not both"):
            await bindings.unbind("x", binding_id=1, target_session_key=session_key(topic_id))
        with pytest.raises(NotFound, match="no binding 42"):
            await bindings.unbind("x", binding_id=42)
        with pytest.raises(Invalid, match="conversation_id: give a non-empty text"):
            ConversationRef("web", "home", " ")


async def test_a_deleted_conversation_takes_its_bindings(parley: Harness) -> None:
    topic_id = await _conversation(parley)
    store, clock = parley.context.store, parley.clock
    async with store.transaction() as tx:
        bound = await SessionBindingService(tx, clock).bind(
            _request(topic_id), creator=await _owner(tx)
        )
    deleted = await parley.owner.delete("/api/v1/conversations/scribe")
    assert deleted.status_code in (200, 204), deleted.text
    async with store.transaction() as tx:
        ended = await SessionBindingService(tx, clock).by_id(bound.binding_id)
    assert (ended.status, ended.ended_reason) == (BindingStatus.ENDED, "session-deleted")
