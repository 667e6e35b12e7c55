"""Session bindings: a channel conversation bound to a session, so that what is said there goes
to that session and what the session completes comes back there. A binding names its session by
a key stable before any run exists (``topic:ID``: a subtask, a person's conversation); it is an
explicit act, recorded with who did it; it ends when unbound (by id or by session, with a
reason), when idle or too old (the sweeper), or with its topic (``session-deleted``).

A binding keeps the privacy rule (``audience``): it may target only a session whose root its
creator and every person of the conversation may read. Checked here, for every channel; a
session the creator may not read is "no open session", as one that does not exist."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from parley.channels.audience import check_shown_to_readers_only, may_read
from parley.channels.model import (
    WEB,
    BindingStatus,
    BindingTargetKind,
    BindRequest,
    ConversationRef,
    SessionBindingRecord,
)
from parley.channels.registry import AdapterRegistry
from parley.channels.web.adapter import web_conversation
from parley.clock import Clock
from parley.deliveries.listing import MAX_PAGE, parse_cursor
from parley.errors import Conflict, Invalid, NotFound
from parley.numbers import ascii_number
from parley.people.accounts import require_owner
from parley.people.model import Person
from parley.store import Tx
from parley.text import check_length

MAX_METADATA = 4000  # characters of a binding's metadata, as JSON
MAX_SECONDS = 10 * 365 * 24 * 3600  # a timeout past ten years is a typo


def topic_of(key: str) -> int:
    """The topic a session key names; Invalid for anything else."""
    kind, _, number = key.partition(":")
    topic = ascii_number(number)
    if kind != "topic" or topic is None:
        raise Invalid(f"session: {key!r} is not a session key (topic:ID)", field="session")
    return topic


def seconds(value: float | None, name: str) -> timedelta | None:
    """A timeout given in seconds at an edge: positive, bounded."""
    if value is None:
        return None
    if not 0 < value <= MAX_SECONDS:
        raise Invalid(f"{name}: give 1 to {MAX_SECONDS} seconds", field=name)
    return timedelta(seconds=value)


MAX_UNBIND_REASON = 500


class SessionBindingService:
    """Bindings, inside one transaction."""

    def __init__(self, tx: Tx, clock: Clock) -> None:
        self._tx, self._clock = tx, clock

    async def bind(self, request: BindRequest, creator: Person | None) -> SessionBindingRecord:
        """Bind a conversation that no active binding holds to an open topic's session that
        ``creator`` (None: a run, binding its own subtask's thread) and every person of the
        conversation may read."""
        key = request.target_session_key
        topic = await self._tx.topics.by_id(topic_of(key))
        if (
            topic is None
            or topic.is_closed
            or (creator is not None and not await may_read(self._tx, creator, topic.id))
        ):
            raise NotFound(f"no open session {key}")
        await check_shown_to_readers_only(
            self._tx, request.conversation, key, topic.id, self._clock.now()
        )
        metadata = json.dumps(dict(request.metadata), sort_keys=True)
        if len(metadata) > MAX_METADATA:
            raise Invalid(f"metadata: at most {MAX_METADATA} characters as JSON", field="metadata")
        held = await self.resolve_by_conversation(request.conversation)
        if held is not None:
            raise Conflict(
                f"{request.conversation} is bound already (binding {held.binding_id},"
                f" to {held.target_session_key})"
            )
        now = self._clock.now()
        lifetimes = [d for d in (request.ttl, request.max_age) if d is not None]
        expires_at = now + min(lifetimes) if lifetimes else None
        return await self._tx.bindings.insert(request, now, expires_at, metadata)

    async def resolve_by_conversation(self, ref: ConversationRef) -> SessionBindingRecord | None:
        return await self._tx.bindings.live_by_conversation(ref)

    async def touch(self, binding_id: int, at: datetime | None = None) -> None:
        """Record activity on the binding (what an idle timeout counts from)."""
        await self._tx.bindings.touch(binding_id, at or self._clock.now())

    async def unbind(
        self,
        reason: str,
        binding_id: int | None = None,
        target_session_key: str | None = None,
    ) -> list[SessionBindingRecord]:
        """End one binding, or every binding of a session; the ones this ended."""
        if (binding_id is None) == (target_session_key is None):
            raise Invalid("unbind: give a binding or a session, not both")
        if not reason.strip():
            raise Invalid("reason: say why", field="reason")
        check_length(reason, MAX_UNBIND_REASON, "reason")  # the API's schema says so too
        if binding_id is not None:
            await self.by_id(binding_id)  # an unknown one is not found; an ended one ends nothing
        else:
            assert target_session_key is not None
            topic_of(target_session_key)
        ids = [binding_id] if binding_id is not None else None
        return await self._tx.bindings.end(
            self._clock.now(), reason, ids=ids, session=target_session_key
        )

    async def by_id(self, binding_id: int) -> SessionBindingRecord:
        found = await self._tx.bindings.by_id(binding_id)
        if found is None:
            raise NotFound(f"no binding {binding_id}")
        return found


@dataclass(frozen=True)
class BindingPage:
    items: list[SessionBindingRecord]
    next: str | None  # pass back as ``before`` for the page after this one


async def list_bindings(
    tx: Tx,
    reader: Person,
    statuses: Sequence[BindingStatus] = (),
    session: str | None = None,
    limit: int = 100,
    before: str | None = None,
) -> BindingPage:
    """Bindings newest first (owners): live and ended, each with who bound it and why it
    ended."""
    require_owner(reader, "read the bindings")
    if not 1 <= limit <= MAX_PAGE:
        raise Invalid(f"limit: give 1 to {MAX_PAGE}", field="limit")
    if session is not None:
        topic_of(session)
    rows = await tx.bindings.listed(statuses, session, parse_cursor(before), limit + 1)
    items = rows[:limit]
    return BindingPage(items, str(items[-1].binding_id) if len(rows) > limit else None)


async def unbind_by_person(
    tx: Tx,
    clock: Clock,
    person: Person,
    reason: str,
    binding_id: int | None = None,
    session: str | None = None,
) -> list[SessionBindingRecord]:
    """An owner ends a binding, or every binding of a session; the ones this ended."""
    require_owner(person, "unbind")
    return await SessionBindingService(tx, clock).unbind(
        reason, binding_id=binding_id, target_session_key=session
    )


async def bind_by_person(
    tx: Tx,
    clock: Clock,
    person: Person,
    session: str,
    conversation: ConversationRef,
    lifetimes: Mapping[str, float | None],
    metadata: Mapping[str, object],
    registry: AdapterRegistry,
) -> SessionBindingRecord:
    """An owner binds a channel conversation to a session they may read (and its people may).
    ``lifetimes``: ttl, idle_timeout, max_age, in seconds."""
    require_owner(person, "bind a conversation")
    if not registry.speaks_for(conversation):
        raise Invalid(
            f"channel: no {conversation.channel} adapter speaks for account"
            f" {conversation.account_id!r} here",
            field="channel",
        )
    if conversation.channel == WEB:  # as it is: its parent checked, or filled in
        conversation = (await web_conversation(tx, conversation)).ref
    request = BindRequest(
        target_session_key=session,
        target_kind=BindingTargetKind.SESSION,
        conversation=conversation,
        bound_by=f"person:{person.name}",
        ttl=seconds(lifetimes.get("ttl"), "ttl_seconds"),
        idle_timeout=seconds(lifetimes.get("idle_timeout"), "idle_timeout_seconds"),
        max_age=seconds(lifetimes.get("max_age"), "max_age_seconds"),
        metadata=metadata,
    )
    return await SessionBindingService(tx, clock).bind(request, creator=person)
