"""Text that comes in from a channel conversation. It goes to the session bound to that
conversation, if any; otherwise to the channel account's default agent, in that person's
conversation with it. Either way the message records where it came from (the requester), so
that the turn's reply, and any completion it later waits for, know where the person is.

A channel user is a Parley person only through a linked identity of that account (its
allow-list); anyone else gets a clear refusal posted back, not silence.

Each person who writes is one of the people of the conversation (``audience``). One who may not
read the bound session's root ends the binding (``privacy``): what they wrote goes nowhere, and
the session's answers stop coming to a place they read; a post there says so."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from parley.agents.selection import pick_for_held_topic
from parley.channels import approvals
from parley.channels.audience import may_read
from parley.channels.bindings import SessionBindingService, topic_of
from parley.channels.model import ConversationRef, SessionBindingRecord, ref_json
from parley.channels.outbound import ChannelPlace, ChannelPost
from parley.clock import Clock
from parley.conversations.person import say
from parley.errors import Conflict
from parley.people.model import Person
from parley.runs.queueing import Queued, check_text, queue_text
from parley.store import Tx

MAX_KEY = 150  # of an outbox key's 200 characters, what the channel's message may take
PRIVACY = "privacy"  # why a binding ended when someone who may not read its session wrote there


@dataclass(frozen=True)
class Refused:
    """A channel user Parley does not know: what was posted back to them."""

    text: str


@dataclass(frozen=True)
class Decided:
    """A person's ``/approve`` or ``/deny``: what it did (the decision's own post tells the
    conversation where the turn waits)."""

    text: str


def refusal(ref: ConversationRef, user_id: str) -> str:
    return (
        f"Parley does not know you ({ref.channel} user {user_id}) on account {ref.account_id}:"
        " ask an owner to link you to a person of this installation"
        f" ('parley channel identity link {ref.channel} {ref.account_id} {user_id} PERSON')."
    )


def refusal_key(ref: ConversationRef, message_id: str) -> str:
    """One refusal per channel message, however often it is received; long ids hashed, so
    the key fits the outbox's column."""
    place = f"{ref.channel}:{ref.account_id}:{message_id}"
    if len(place) > MAX_KEY:
        place = hashlib.sha256(place.encode()).hexdigest()
    return f"refusal:{place}"


async def receive_from_person(
    tx: Tx, clock: Clock, person: Person, ref: ConversationRef, text: str
) -> Queued | Refused:
    """``person`` said ``text`` in ``ref``: give it to the bound session or the default agent;
    refused if the session is one they may not read (the binding ends)."""
    check_text(text)
    await tx.channels.met(ref, person.id, clock.now())
    binding = await tx.bindings.live_by_conversation(ref)
    if binding is None:
        account = await tx.channels.account(ref.channel, ref.account_id)
        if account is None or account.default_agent is None:
            raise Conflict(
                f"{ref} is bound to no session and {ref.channel} account {ref.account_id!r}"
                " has no default agent"
            )
        return await say(tx, clock, person, account.default_agent, text, channel_ref=ref_json(ref))
    topic = await tx.topics.by_id(topic_of(binding.target_session_key))
    if topic is None or topic.is_closed:
        raise Conflict(f"the session {ref} is bound to was closed", reason="thread")
    if not await may_read(tx, person, topic.id):
        return await _end_for_privacy(tx, clock, person, binding)
    worker = await pick_for_held_topic(tx, topic.agent_name)
    queued = await queue_text(
        tx, clock.now(), topic, worker, text, author_person_id=person.id,
        channel_ref=ref_json(ref),
    )  # fmt: skip
    await tx.bindings.touch(binding.binding_id, clock.now())
    return queued


async def _end_for_privacy(
    tx: Tx, clock: Clock, person: Person, binding: SessionBindingRecord
) -> Refused:
    """``person`` writes in a bound conversation but may not read its session: it ends, and a
    post there says why (naming no session)."""
    ref = binding.conversation
    await SessionBindingService(tx, clock).unbind(PRIVACY, binding_id=binding.binding_id)
    words = (
        f"This conversation is no longer bound to a session: {person.name} writes here and may"
        " not read it. What they wrote went nowhere; write again to be answered as anywhere."
    )
    post = ChannelPost(**ChannelPlace.fields_of(ref), text=words)
    if await tx.outbox.put(f"privacy:{binding.binding_id}", post, clock.now()):
        tx.effects.outbox = True
    return Refused(words)


async def receive_from_user(
    tx: Tx, clock: Clock, ref: ConversationRef, user_id: str, message_id: str, text: str
) -> Queued | Refused | Decided:
    """A channel user (as the adapter knows them) said ``text`` in ``ref``, in the channel's
    message ``message_id``: as their person (a decision, if it is ``/approve ID`` or ``/deny ID
    [why]``), or refused with a post saying why."""
    account = await tx.channels.account(ref.channel, ref.account_id)
    person_id = None if account is None else await tx.channels.person_of(account.id, user_id)
    person = None if person_id is None else await tx.people.by_id(person_id)
    if person is None:
        words = refusal(ref, user_id)
        post = ChannelPost(**ChannelPlace.fields_of(ref), text=words)
        key = refusal_key(ref, message_id)
        if await tx.outbox.put(key, post, clock.now()):
            tx.effects.outbox = True
        return Refused(words)
    decided = await approvals.command(tx, clock, person, text)
    if decided is not None:
        return Decided(decided)
    return await receive_from_person(tx, clock, person, ref, text)
