"""What the bot sends: ``m.room.message`` events put with a transaction id derived from
Parley's key (``PUT /rooms/{room}/send/m.room.message/{txnId}``: the homeserver answers a
repeated transaction id with the event it made the first time, and posts nothing again), in a
room or in a thread (``m.thread``, falling back to a reply to the root for clients without
threads)."""

from __future__ import annotations

from typing import Any, cast

from mautrix.client import ClientAPI
from mautrix.types import EventContent, EventType, RoomID

from parley.channels.matrix.refs import part_key, txn_id

# A Matrix event is at most 65536 bytes of JSON: parts of 8000 characters fit, however escaped.
MAX_PART_CHARS = 8000
PERSONA = "com.beeper.per_message_profile"  # MSC4144: who speaks, where clients show it


def content(
    text: str,
    root: str | None,
    *,
    msgtype: str = "m.text",
    reply_to: str | None = None,
    persona: str | None = None,
) -> dict[str, Any]:
    made: dict[str, Any] = {"msgtype": msgtype, "body": text}
    if root is not None:
        made["m.relates_to"] = {
            "rel_type": "m.thread",
            "event_id": root,
            "is_falling_back": reply_to is None,
            "m.in_reply_to": {"event_id": reply_to or root},
        }
    elif reply_to is not None:
        made["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
    if persona is not None:
        made[PERSONA] = {"id": persona, "displayname": persona, "has_fallback": False}
    return made


async def send(client: ClientAPI, room_id: str, made: dict[str, Any], key: str) -> str:
    """Put one event with the key's transaction id; its event id."""
    sent = await client.send_message_event(
        RoomID(room_id), EventType.ROOM_MESSAGE, cast(EventContent, made), txn_id=txn_id(key)
    )
    return str(sent)


async def send_text(
    client: ClientAPI, room_id: str, root: str | None, text: str, key: str,
    persona: str | None = None,
) -> str:  # fmt: skip
    """Post ``text`` (in parts, each with its own derived key); the last part's event id."""
    sent = ""
    for number, part in enumerate(parts(text)):
        made = content(part, root, persona=persona)
        sent = await send(client, room_id, made, part_key(key, number))
    return sent


def parts(text: str) -> list[str]:
    return [text[i : i + MAX_PART_CHARS] for i in range(0, len(text), MAX_PART_CHARS)] or [text]
