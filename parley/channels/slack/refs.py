"""Slack's places as Parley names them: a channel or a direct conversation is a conversation
(its id, ``C…``/``D…``/``G…``); a thread is ``CHANNEL/THREAD_TS`` under its channel, where
``THREAD_TS`` is the ``ts`` of the message the thread hangs from."""

from __future__ import annotations

import re
from typing import TypeGuard

from parley.channels.model import ConversationRef
from parley.errors import Invalid

SLACK = "slack"
CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{1,40}")
USER_ID = re.compile(r"[UW][A-Z0-9]{1,40}")
TS = re.compile(r"[0-9]{1,12}\.[0-9]{1,8}")


def is_channel_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and CHANNEL_ID.fullmatch(value) is not None


def is_user_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and USER_ID.fullmatch(value) is not None


def is_ts(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and TS.fullmatch(value) is not None


def conversation(account_id: str, channel: str, thread_ts: str | None = None) -> ConversationRef:
    if thread_ts is None:
        return ConversationRef(SLACK, account_id, channel)
    return ConversationRef(SLACK, account_id, f"{channel}/{thread_ts}", channel)


def place(ref: ConversationRef) -> tuple[str, str | None]:
    """The Slack channel id of ``ref`` and its thread's ``thread_ts`` (None: not a thread);
    Invalid (final) for what names no Slack place."""
    channel, _, thread_ts = ref.conversation_id.partition("/")
    if not is_channel_id(channel) or (thread_ts and not is_ts(thread_ts)):
        raise Invalid(f"conversation: {ref.conversation_id!r} is not a Slack channel or thread")
    return channel, thread_ts or None


def tokens(secret: str) -> tuple[str, str] | None:
    """The bot token (``xoxb-…``) and the app-level token (``xapp-…``) of a stored secret."""
    words = secret.split()
    bot = next((w for w in words if w.startswith("xoxb-")), None)
    app = next((w for w in words if w.startswith("xapp-")), None)
    return None if bot is None or app is None else (bot, app)
