"""Posting once by key on Slack, which has no idempotency of its own: each message carries its
key in Slack's message metadata (``event_type`` ``parley_post``), and before Parley posts a
key it has not seen Slack take in this process, it looks for a message of this bot carrying it
among the conversation's recent messages (``conversations.history``, or ``conversations.replies``
in a thread, with ``include_all_metadata``): found, that message's ``ts`` is the answer and
nothing is posted. A key Slack took in this process is answered from memory.

Every key not known in this process is looked for (a first attempt cannot be told from an
attempt made before a restart, whose answer was lost). What remains: a message that has fallen
out of the window looked at (the channel's ``once_window`` newest messages; a thread's first
``MAX_PAGES`` pages of replies, Slack giving them oldest first) is posted again by a retry; so
may be a post Slack took but does not show in the history yet (Slack's own delay, seconds at
most); and a person who deletes the first copy before the retry gets a second. Each first post
costs one history read: Slack's Tier 3, about 50 a minute for an app made for its own
workspace (Slack limits apps distributed outside its Marketplace far more); a 429 there waits
like any other."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from parley.errors import Invalid

EVENT_TYPE = "parley_post"
MAX_MESSAGE = 4000  # characters Slack recommends for one message's text
MAX_PAGES = 10  # of a thread's replies looked through, oldest first
REMEMBERED = 10_000  # keys whose ts is kept in memory


def parts(text: str, key: str) -> list[tuple[str, str]]:
    """``text`` in Slack-sized parts, in order, each with its own key."""
    pieces = [text[i : i + MAX_MESSAGE] for i in range(0, len(text), MAX_MESSAGE)] or [text]
    return [(key if n == 0 else f"{key}:{n}", piece) for n, piece in enumerate(pieces)]


def escaped(text: str) -> str:
    """Slack reads ``&``, ``<`` and ``>`` as markup: an agent's text is shown as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def metadata(key: str) -> dict[str, Any]:
    return {"event_type": EVENT_TYPE, "event_payload": {"key": key}}


def key_of(message: Mapping[str, Any], bot_id: str | None) -> str | None:
    """The key a message of this bot carries, if any (another app's marker is not ours)."""
    found = message.get("metadata")
    if not isinstance(found, Mapping) or found.get("event_type") != EVENT_TYPE:
        return None
    if bot_id is not None and message.get("bot_id") != bot_id:
        return None
    payload = found.get("event_payload")
    key = payload.get("key") if isinstance(payload, Mapping) else None
    return key if isinstance(key, str) else None


class SentKeys:
    """The keys Slack took in this process (the newest ``REMEMBERED``), with the ``ts`` of the
    message each made; a key forgotten is looked for in the history again."""

    def __init__(self, size: int = REMEMBERED) -> None:
        self._ts: OrderedDict[str, str] = OrderedDict()
        self._size = size

    def ts(self, key: str) -> str | None:
        return self._ts.get(key)

    def took(self, key: str, ts: str) -> None:
        self._ts[key] = ts
        self._ts.move_to_end(key)
        if len(self._ts) > self._size:
            self._ts.popitem(last=False)


async def marked(
    web: AsyncWebClient,
    channel: str,
    thread_ts: str | None,
    keys: set[str],
    window: int,
    bot_id: str | None,
) -> dict[str, str]:
    """The ``ts`` of each of ``keys`` found on a recent message of the conversation."""
    found: dict[str, str] = {}
    for message in await _recent(web, channel, thread_ts, window):
        key = key_of(message, bot_id)
        if key in keys and isinstance(message.get("ts"), str):
            found.setdefault(key, message["ts"])
    return found


async def _recent(
    web: AsyncWebClient, channel: str, thread_ts: str | None, window: int
) -> list[Mapping[str, Any]]:
    if thread_ts is None:
        answer = await web.conversations_history(channel=channel, limit=window,
                                                 include_all_metadata=True)  # fmt: skip
        return _messages(answer.get("messages"))
    messages: list[Mapping[str, Any]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        answer = await web.conversations_replies(
            channel=channel, ts=thread_ts, limit=window, cursor=cursor, include_all_metadata=True
        )
        messages.extend(_messages(answer.get("messages")))
        meta = answer.get("response_metadata")
        cursor = meta.get("next_cursor") if isinstance(meta, Mapping) else None
        if not cursor or not answer.get("has_more"):
            break
    return messages


def _messages(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        raise Invalid("Slack answered a history without messages")
    return [m for m in value if isinstance(m, Mapping)]
