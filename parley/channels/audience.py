"""Who a channel conversation shows a bound session to, and whether it may: visibility follows
the root, in channels as in the API. A binding shows its session's answers (and, through its
agent, whatever the session holds) to the people of the conversation, so it may target only a
session whose root its creator and every one of them may read — the store's one rule
(``tx.topics.readable``), never a second one.

The people of a channel conversation:
  - a web conversation (or thread): its person; it is theirs alone, as a person's conversation
    is (a web conversation with no person counts as any member: only roots every member reads);
  - a conversation of a channel whose readers Parley cannot list (Discord): the people Parley
    knows there, each linked person who wrote or bound there. Who writes there later is checked
    as they write (``inbound``)."""

from __future__ import annotations

from datetime import datetime

from parley.channels.model import WEB, ConversationRef
from parley.channels.web.adapter import web_conversation
from parley.errors import Forbidden
from parley.people.model import Person, Role
from parley.store import Tx

NOBODY = 0  # no person has this id: a reader who is any member and no one in particular


async def people_of(tx: Tx, ref: ConversationRef, now: datetime) -> list[Person]:
    """The people ``ref`` shows what is bound to it (a web conversation: NotFound if none)."""
    if ref.channel != WEB:
        return await tx.channels.people_in(ref)
    its_person = (await web_conversation(tx, ref)).person_id
    person = None if its_person is None else await tx.people.by_id(its_person)
    return [person or Person(NOBODY, "any member", Role.MEMBER, now)]


async def may_read(tx: Tx, person: Person, topic_id: int) -> bool:
    return await tx.topics.readable(person, topic_id) is not None


async def check_shown_to_readers_only(
    tx: Tx, ref: ConversationRef, session: str, topic_id: int, now: datetime
) -> None:
    """Forbidden unless every person of ``ref`` may read the session's root."""
    barred = [p.name for p in await people_of(tx, ref, now) if not await may_read(tx, p, topic_id)]
    if barred:
        raise Forbidden(
            f"{ref} would show {session} to {', '.join(barred)}, who may not read it: a"
            " binding takes only a session every person of its conversation may read"
        )
