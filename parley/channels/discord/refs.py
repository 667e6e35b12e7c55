"""Discord's places as Parley names them: a text channel is a conversation; a thread is a
conversation under its parent channel. Ids are Discord's snowflakes, as decimal text."""

from __future__ import annotations

import hashlib

from parley.channels.model import ConversationRef
from parley.errors import Invalid
from parley.numbers import ascii_number

DISCORD = "discord"
MAX_NONCE = 25  # Discord's limit on a message nonce
MAX_SNOWFLAKE = 2**64 - 1


def snowflake(ref_part: str, what: str = "conversation") -> int:
    """A conversation's Discord id; Invalid (final) for what cannot be one."""
    number = ascii_number(ref_part, MAX_SNOWFLAKE)
    if number is None:
        raise Invalid(f"{what}: {ref_part!r} is not a Discord id")
    return number


def conversation(account_id: str, channel_id: int, parent_id: int | None) -> ConversationRef:
    parent = None if parent_id is None else str(parent_id)
    return ConversationRef(DISCORD, account_id, str(channel_id), parent)


def nonce(idempotency_key: str) -> str:
    """The key as a nonce Discord dedups on (enforce_nonce): 25 characters of its hash."""
    return hashlib.sha256(idempotency_key.encode()).hexdigest()[:MAX_NONCE]
