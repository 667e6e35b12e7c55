"""What a ``/sync`` brings, read as Parley reads it. Only the timelines of rooms the bot has
joined are read (a ``rooms.join`` entry; events said to be of other rooms are never taken). Of
their events, a person's text message (``m.room.message`` of msgtype ``m.text`` or ``m.emote``)
is heard; never taken as text: the bot's own events, other bots' (``m.notice``, which is what
bots post), every other event type (state, reactions, redactions), edits (``m.replace``: the
agent already has the first version; a correction is said anew), a redacted message (the
agent already had it: Matrix deletions do not unsay what was heard), and any event whose ids
are not shaped as Matrix's (forged or broken); each skipped with a debug or info line.

A message in a thread (``m.relates_to`` of ``rel_type`` ``m.thread``) is heard in the thread:
the conversation named by the thread's root under its room. A reply's quoted fallback (the
``> <@who> …`` lines older clients put first) is not part of what the person said."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from parley.channels.matrix.refs import is_event_id, is_room_id, is_user_id, room, thread
from parley.channels.model import ConversationRef

log = logging.getLogger(__name__)

TEXT_TYPES = ("m.text", "m.emote")
THREAD, EDIT = "m.thread", "m.replace"


@dataclass(frozen=True)
class Said:
    """A person's text in a room or thread, as the bot heard it."""

    ref: ConversationRef
    room_id: str
    sender: str
    event_id: str
    text: str


def joined_timelines(answer: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(room id, event) of every timeline event of the joined rooms, in order."""
    rooms = _dict(_dict(answer.get("rooms")).get("join"))
    found: list[tuple[str, dict[str, Any]]] = []
    for room_id, joined in rooms.items():
        if not is_room_id(room_id):
            log.info("matrix: a joined room with a malformed id ignored")
            continue
        events = _dict(_dict(joined).get("timeline")).get("events")
        for event in events if isinstance(events, list) else []:
            if isinstance(event, dict):
                found.append((room_id, event))
    return found


def invites(answer: dict[str, Any], bot_id: str) -> list[tuple[str, str]]:
    """(room id, inviter) of each invite of the bot this sync brings."""
    rooms = _dict(_dict(answer.get("rooms")).get("invite"))
    found: list[tuple[str, str]] = []
    for room_id, invited in rooms.items():
        events = _dict(_dict(invited).get("invite_state")).get("events")
        for event in events if isinstance(events, list) else []:
            if _invites_bot(event, bot_id) and is_room_id(room_id):
                found.append((room_id, str(event["sender"])))
    return found


def _invites_bot(event: Any, bot_id: str) -> bool:
    return (
        isinstance(event, dict)
        and event.get("type") == "m.room.member"
        and event.get("state_key") == bot_id
        and _dict(event.get("content")).get("membership") == "invite"
        and is_user_id(event.get("sender"))
    )


def said(account_id: str, room_id: str, event: dict[str, Any]) -> Said | None:
    """A person's text, or None for what is never taken as text (logged why)."""
    why = _not_text(account_id, event)
    if why is not None:
        log.debug("matrix %s: event %r not taken: %s", room_id, event.get("event_id"), why)
        return None
    content = _dict(event.get("content"))
    relation = _dict(content.get("m.relates_to"))
    root = relation.get("event_id")
    if relation.get("rel_type") == THREAD and not is_event_id(root):
        log.info("matrix %s: a thread message with a malformed root ignored", room_id)
        return None
    ref = (
        thread(account_id, room_id, str(root))
        if relation.get("rel_type") == THREAD
        else room(account_id, room_id)
    )
    text = _without_reply_fallback(str(content["body"]), relation)
    return Said(ref, room_id, str(event["sender"]), str(event["event_id"]), text)


def _without_reply_fallback(body: str, relation: dict[str, Any]) -> str:
    """A reply's own words: older clients quote what it answers first (``> <@who> …`` lines,
    then a blank line), which is not what the person said now."""
    if (
        "m.in_reply_to" not in relation
        or relation.get("is_falling_back")
        or not body.startswith("> ")
    ):
        return body
    lines = body.split("\n")
    quoted = next((i for i, line in enumerate(lines) if not line.startswith(">")), len(lines))
    rest = (
        lines[quoted + 1 :] if quoted < len(lines) and not lines[quoted].strip() else lines[quoted:]
    )
    return "\n".join(rest) or body


def _not_text(bot_id: str, event: dict[str, Any]) -> str | None:
    """Why the event is no person's text, if it is not."""
    content = _dict(event.get("content"))
    if event.get("type") != "m.room.message" or "state_key" in event:
        return f"a {event.get('type')!r} event"
    if not (is_user_id(event.get("sender")) and is_event_id(event.get("event_id"))):
        log.info("matrix: an event with a malformed sender or id ignored")
        return "malformed"
    if event["sender"] == bot_id:
        return "the bot's own"
    if "redacted_because" in _dict(event.get("unsigned")) or not content:
        return "redacted"
    if _dict(content.get("m.relates_to")).get("rel_type") == EDIT:
        log.info("matrix: an edit by %s ignored (the first version was heard)", event["sender"])
        return "an edit"
    if content.get("msgtype") not in TEXT_TYPES or not isinstance(content.get("body"), str):
        return f"a {content.get('msgtype')!r} message (m.notice: a bot's)"
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
