"""``/focus AGENT-OR-SESSION`` and ``/unfocus`` (in each chat service's own command form): a
person binds the channel, room or thread they are in to a session (their conversation with an
agent, or ``topic:ID``), so that what is said there goes to it and its answers come back there;
only who bound it unbinds it (an owner can always, with ``parley binding unbind``). The binding
service keeps the privacy rule: the session's root must be one the person and every person
Parley knows there (who wrote or bound there) may read. Each answers with one sentence, seen by
the person who asked only (where the service can show it to them alone)."""

from __future__ import annotations

from datetime import timedelta

from parley.channels.bindings import SessionBindingService, topic_of
from parley.channels.model import BindingTargetKind, BindRequest, ConversationRef, session_key
from parley.clock import Clock
from parley.conversations.person import open_or_start
from parley.errors import Forbidden, NotFound
from parley.people.model import Person
from parley.settings import ThreadBindingSettings
from parley.store import Tx

UNFOCUS = "unfocus"  # why a binding ended by /unfocus


def bound_by(channel: str, user_id: str) -> str:
    return f"{channel}:{user_id}"


async def focus(
    tx: Tx,
    clock: Clock,
    ref: ConversationRef,
    user_id: str,
    target: str,
    lifetimes: ThreadBindingSettings,
) -> str:
    person = await _person(tx, ref, user_id)
    # Who binds a place is there, as who writes there is: a later binding must not show them
    # a session they may not read.
    await tx.channels.met(ref, person.id, clock.now())
    key = await _session(tx, clock, person, target.strip())
    await SessionBindingService(tx, clock).bind(
        BindRequest(
            target_session_key=key,
            target_kind=BindingTargetKind.SESSION,
            conversation=ref,
            bound_by=bound_by(ref.channel, user_id),
            idle_timeout=_seconds(lifetimes.idle_timeout_seconds),
            max_age=_seconds(lifetimes.max_age_seconds),
        ),
        creator=person,
    )
    topic = await tx.topics.by_id(topic_of(key))
    agent = "" if topic is None else f" ({topic.agent_name})"
    return (
        f"Bound here to {key}{agent}: what you write here goes to it, and its answers come"
        " here. /unfocus ends it."
    )


async def unfocus(tx: Tx, clock: Clock, ref: ConversationRef, user_id: str) -> str:
    bindings = SessionBindingService(tx, clock)
    held = await bindings.resolve_by_conversation(ref)
    if held is None or not held.is_active:
        raise NotFound("nothing is bound here")
    if held.bound_by != bound_by(ref.channel, user_id):
        raise Forbidden(
            f"only who bound it ({held.bound_by}) can unfocus binding {held.binding_id};"
            f" an owner can with 'parley binding unbind {held.binding_id}'"
        )
    await bindings.unbind(UNFOCUS, binding_id=held.binding_id)
    return f"Unbound from {held.target_session_key}: this place is as before."


async def _person(tx: Tx, ref: ConversationRef, user_id: str) -> Person:
    account = await tx.channels.account(ref.channel, ref.account_id)
    person_id = None if account is None else await tx.channels.person_of(account.id, user_id)
    person = None if person_id is None else await tx.people.by_id(person_id)
    if person is None:
        raise Forbidden(
            f"Parley does not know you ({ref.channel} user {user_id}): ask an owner to link you"
        )
    return person


async def _session(tx: Tx, clock: Clock, person: Person, target: str) -> str:
    """The session key: ``topic:ID`` as given (the binding service checks who may read it),
    or that of the person's conversation with the agent so named."""
    if target.startswith("topic:"):
        return session_key(topic_of(target))
    return session_key((await open_or_start(tx, clock, person, target)).id)


def _seconds(value: float | None) -> timedelta | None:
    return None if value is None else timedelta(seconds=value)
