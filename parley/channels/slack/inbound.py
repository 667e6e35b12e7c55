"""What comes in over Socket Mode as ``message`` events: a person's message, once (Slack
delivers an event again when its acknowledgement was late), in its channel, or in its thread
when its ``thread_ts`` is not its own ``ts``. Never taken as text: this bot's own messages and
other bots' (a ``bot_id``), and every message with a ``subtype``: edits (``message_changed``)
and deletions (``message_deleted``) are ignored, as Parley has already taken the first text and
its answer may be on its way; joins, topic changes and the like are not anyone's words. An
event of another workspace, one whose ids are not Slack's shapes, or whose text no Slack client
sends (over 40,000 characters, NUL bytes) is ignored with a log line: nothing of it is
stored."""

from __future__ import annotations

import html
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from parley.channels.model import ConversationRef
from parley.channels.slack.manager import Identity
from parley.channels.slack.refs import conversation, is_channel_id, is_ts, is_user_id

log = logging.getLogger(__name__)

MAX_TEXT = 40_000  # characters: Slack cuts a longer message, so a longer event is not Slack's
REMEMBERED = 2000  # messages whose second delivery is recognised


class Seen:
    """The messages heard lately: Slack delivers an event again when its acknowledgement did
    not reach it in time (a reconnection), and a message is one turn, not two."""

    def __init__(self, size: int = REMEMBERED) -> None:
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._size = size

    def first_time(self, ref: ConversationRef, ts: str) -> bool:
        key = (ref.conversation_id, ts)
        if key in self._seen:
            return False
        self._seen[key] = None
        if len(self._seen) > self._size:
            self._seen.popitem(last=False)
        return True


def said(
    account_id: str, payload: Mapping[str, Any], me: Identity
) -> tuple[ConversationRef, str, str, str] | None:
    """Where a person said what, in an ``events_api`` payload: (place, user, ts, text); None
    for what is not a person's new message."""
    team = payload.get("team_id")
    if me.team_id is not None and team is not None and team != me.team_id:
        log.warning("slack account %r: an event of workspace %r ignored", account_id, team)
        return None
    event = payload.get("event")
    if not isinstance(event, Mapping) or event.get("type") != "message":
        return None
    if event.get("subtype") is not None:
        log.info("slack account %r: a %s message ignored", account_id, event.get("subtype"))
        return None
    if event.get("bot_id") is not None or event.get("user") == me.user_id:
        return None  # ours (an echo of a post) or another app's
    return _shaped(account_id, event)


def _shaped(
    account_id: str, event: Mapping[str, Any]
) -> tuple[ConversationRef, str, str, str] | None:
    channel, user, ts = event.get("channel"), event.get("user"), event.get("ts")
    thread_ts, text = event.get("thread_ts"), event.get("text")
    if not (is_channel_id(channel) and is_user_id(user) and is_ts(ts) and isinstance(text, str)
            and (thread_ts is None or is_ts(thread_ts))):  # fmt: skip
        log.warning("slack account %r: a malformed message event ignored", account_id)
        return None
    if len(text) > MAX_TEXT or "\x00" in text:
        log.warning("slack account %r: message %s is no Slack text (too long or NUL), ignored",
                    account_id, ts)  # fmt: skip
        return None
    in_thread = thread_ts if thread_ts is not None and thread_ts != ts else None
    return conversation(account_id, channel, in_thread), user, ts, html.unescape(text)


def fresh(
    account_id: str, payload: Mapping[str, Any], me: Identity, seen: Seen
) -> tuple[ConversationRef, str, str, str] | None:
    """``said``, once per message."""
    found = said(account_id, payload, me)
    if found is None:
        return None
    ref, _, ts, _ = found
    if not seen.first_time(ref, ts):
        log.info("slack account %r: message %s delivered again, ignored", account_id, ts)
        return None
    return found
