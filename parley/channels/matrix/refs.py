"""Matrix's places as Parley names them: a room is a conversation (its id, ``!…``); a thread
(``m.thread``) is a conversation named by its root event's id (``$…``) under its room. And the
transaction ids Parley's outbox keys become, so that the homeserver posts a repeated attempt
once."""

from __future__ import annotations

import base64
import hashlib

from parley.channels.model import MAX_PART, ConversationRef
from parley.errors import Invalid

MATRIX = "matrix"


def _plausible(value: object, sigil: str) -> bool:
    """An id of the kind the sigil names, as a homeserver sends it (anything else is forged or
    broken, and never stored)."""
    return (
        isinstance(value, str)
        and 1 < len(value) <= MAX_PART
        and value.startswith(sigil)
        and value.isprintable()
        and not any(c.isspace() for c in value)
    )


def is_room_id(value: object) -> bool:
    return _plausible(value, "!")


def is_event_id(value: object) -> bool:
    return _plausible(value, "$")


def is_user_id(value: object) -> bool:
    return _plausible(value, "@") and ":" in str(value)


def room(account_id: str, room_id: str) -> ConversationRef:
    return ConversationRef(MATRIX, account_id, room_id)


def thread(account_id: str, room_id: str, root_id: str) -> ConversationRef:
    return ConversationRef(MATRIX, account_id, root_id, room_id)


def place(ref: ConversationRef) -> tuple[str, str | None]:
    """The room a post in ``ref`` goes to, and the thread's root when it is a thread; Invalid
    (final) for what Matrix cannot have sent."""
    if ref.parent_conversation_id is None:
        if not is_room_id(ref.conversation_id):
            raise Invalid(f"conversation: {ref.conversation_id!r} is not a Matrix room id")
        return ref.conversation_id, None
    if not (is_room_id(ref.parent_conversation_id) and is_event_id(ref.conversation_id)):
        raise Invalid(f"{ref} is not a Matrix thread (a $event under a !room)")
    return ref.parent_conversation_id, ref.conversation_id


def txn_id(idempotency_key: str) -> str:
    """The key as a transaction id: its hash, URL-safe, so any key fits a path segment."""
    digest = hashlib.sha256(idempotency_key.encode()).digest()
    return "parley-" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def part_key(idempotency_key: str, number: int) -> str:
    """Each part of a long post its own key (the first keeps the post's own)."""
    return idempotency_key if number == 0 else f"{idempotency_key}:{number}"
