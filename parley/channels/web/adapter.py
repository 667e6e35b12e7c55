"""The web channel's adapter: posting to one of its conversations stores the message where the
API reads it; a thread is a conversation under another. A key already used posts (or makes)
nothing again, as a remote receiver recognises a repeated attempt."""

from __future__ import annotations

from parley.channels.model import WEB, ConversationRef, WebConversation
from parley.clock import Clock
from parley.errors import Invalid, NotFound
from parley.numbers import ascii_number
from parley.store import Store, Tx

PARLEY = "parley"  # the author of what Parley itself posts


class WebChannel:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store, self._clock = store, clock

    async def post(
        self, ref: ConversationRef, text: str, persona: str | None, idempotency_key: str
    ) -> str:
        async with self._store.transaction() as tx:
            conversation = await web_conversation(tx, ref)
            posted = await tx.channels.add_web_message(
                conversation.id, persona or PARLEY, text, self._clock.now(), idempotency_key
            )
        return str(posted)

    async def create_thread(
        self, parent: ConversationRef, name: str, idempotency_key: str
    ) -> ConversationRef:
        async with self._store.transaction() as tx:
            under = await web_conversation(tx, parent)
            thread = await tx.channels.add_web_conversation(
                under.account_id,
                name,
                under.person_id,
                self._clock.now(),
                parent_id=under.id,
                key=idempotency_key,
            )
        return thread.ref


async def web_conversation(tx: Tx, ref: ConversationRef) -> WebConversation:
    """The web conversation ``ref`` names (NotFound, a final verdict, if none); a parent
    ``ref`` gives must be its own (Invalid otherwise: a thread is recognised by its parent)."""
    number = ascii_number(ref.conversation_id)
    found = None
    if ref.channel == WEB and number is not None:
        found = await tx.channels.web_conversation(number)
    if found is None or found.account_id != ref.account_id:
        raise NotFound(f"no web conversation {ref.channel}:{ref.account_id}:{ref.conversation_id}")
    parent = ref.parent_conversation_id
    if parent is not None and parent != found.ref.parent_conversation_id:
        raise Invalid(
            f"parent_conversation_id: web conversation {number} is not a thread of {parent!r}",
            field="parent_conversation_id",
        )
    return found
