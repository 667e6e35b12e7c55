"""Text that comes in from a channel conversation. It goes to the session bound to that
conversation, if any; otherwise to the channel account's default agent, in that person's
conversation with it. Either way the message records where it came from (the requester), so
that the turn's reply, and any completion it later waits for, know where the person is.

A channel user is a Parley person only through a linked identity of that account (its
allow-list); anyone else gets a clear refusal posted back, not silence."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from parley.agents.selection import pick_for_held_topic
from parley.channels.bindings import topic_of
from parley.channels.model import ConversationRef, ref_json
from parley.channels.outbound import ChannelPlace, ChannelPost
from parley.clock import Clock
from parley.conversations.person import say
from parley.errors import Conflict
from parley.people.model import Person
from parley.runs.queueing import Queued, check_text, queue_text
from parley.store import Tx

MAX_KEY = 150  # of an outbox key's 200 characters, what the channel's message may take


@dataclass(frozen=True)
class Refused:
    """A channel user Parley does not know: what was posted back to them."""

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
) -> Queued:
    """``person`` said ``text`` in ``ref``: give it to the bound session or the default agent."""
    check_text(text)
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
    worker = await pick_for_held_topic(tx, topic.agent_name)
    queued = await queue_text(
        tx, clock.now(), topic, worker, text, author_person_id=person.id,
        channel_ref=ref_json(ref),
    )  # fmt: skip
    await tx.bindings.touch(binding.binding_id, clock.now())
    return queued


async def receive_from_user(
    tx: Tx, clock: Clock, ref: ConversationRef, user_id: str, message_id: str, text: str
) -> Queued | Refused:
    """A channel user (as the adapter knows them) said ``text`` in ``ref``, in the channel's
    message ``message_id``: as their person, or refused with a post saying why."""
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
    return await receive_from_person(tx, clock, person, ref, text)
