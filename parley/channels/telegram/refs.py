"""Telegram's places as Parley names them. A chat (private, group, supergroup) is a conversation,
its id as decimal text (negative for groups). A forum topic of a supergroup is a thread under its
chat: ``CHAT/TOPIC`` (its ``message_thread_id``). Where there are no topics (a private chat, a
plain group) a thread is a reply chain: ``CHAT/rROOT``, the id of the message it hangs from."""

from __future__ import annotations

import re
from dataclasses import dataclass

from parley.channels.model import ConversationRef
from parley.errors import Invalid

TELEGRAM = "telegram"
_PLACE = re.compile(r"(-?[0-9]{1,19})(?:/(r?)([0-9]{1,19}))?")


@dataclass(frozen=True)
class Place:
    """Where a message goes: a chat, and in it a forum topic or a reply chain's root."""

    chat_id: int
    topic_id: int | None = None
    root_id: int | None = None

    @property
    def is_thread(self) -> bool:
        return self.topic_id is not None or self.root_id is not None


def place(ref: ConversationRef) -> Place:
    """The place a conversation names; Invalid (final) for what cannot be one."""
    found = _PLACE.fullmatch(ref.conversation_id)
    if found is None:
        raise Invalid(f"conversation: {ref.conversation_id!r} is not a Telegram chat or thread")
    chat, chain, number = found.groups()
    if number is None:
        return Place(int(chat))
    return Place(int(chat), root_id=int(number)) if chain else Place(int(chat), int(number))


def conversation(account_id: str, where: Place) -> ConversationRef:
    chat = str(where.chat_id)
    if where.topic_id is not None:
        return ConversationRef(TELEGRAM, account_id, f"{chat}/{where.topic_id}", chat)
    if where.root_id is not None:
        return ConversationRef(TELEGRAM, account_id, f"{chat}/r{where.root_id}", chat)
    return ConversationRef(TELEGRAM, account_id, chat)
