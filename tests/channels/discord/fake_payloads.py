"""The JSON shapes Discord's API v10 gives for the fake's objects (the fields discord.py reads)."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.channels.discord.fake_state import (
    JSON,
    FakeChannel,
    FakeCommand,
    FakeGuild,
    FakeInteraction,
    FakeMessage,
    FakeState,
    FakeUser,
    FakeWebhook,
)

ALL_PERMISSIONS = str((1 << 50) - 1)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def user(u: FakeUser) -> JSON:
    return {
        "id": str(u.id),
        "username": u.username,
        "global_name": None if u.bot else u.username,
        "discriminator": "0",
        "avatar": None,
        "bot": u.bot,
        "public_flags": 0,
        "flags": 0,
    }


def member(u: FakeUser) -> JSON:
    return {
        "user": user(u),
        "roles": [],
        "joined_at": now_iso(),
        "deaf": False,
        "mute": False,
        "flags": 0,
        "pending": False,
        "permissions": ALL_PERMISSIONS,
    }


def application(state: FakeState) -> JSON:
    return {
        "id": str(state.application_id),
        "name": state.bot.username,
        "description": "",
        "icon": None,
        "bot_public": False,
        "bot_require_code_grant": False,
        "owner": user(state.bot),
        "verify_key": "0" * 64,
        "flags": 0,
        "interactions_endpoint_url": None,
        "bot": user(state.bot),
    }


def channel(c: FakeChannel) -> JSON:
    data: JSON = {
        "id": str(c.id),
        "type": c.type,
        "guild_id": str(c.guild_id),
        "name": c.name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "rate_limit_per_user": 0,
        "flags": 0,
        "last_message_id": None,
    }
    if c.is_thread:
        data |= {
            "parent_id": str(c.parent_id),
            "owner_id": str(c.owner_id),
            "message_count": c.message_count,
            "member_count": 1,
            "total_message_sent": c.message_count,
            "thread_metadata": {
                "archived": c.archived,
                "locked": c.locked,
                "auto_archive_duration": c.auto_archive_duration,
                "archive_timestamp": now_iso(),
                "invitable": True,
            },
        }
    else:
        data |= {"topic": None, "parent_id": None}
    return data


def guild(state: FakeState, g: FakeGuild) -> JSON:
    channels = state.guild_channels(g.id)
    everyone = {
        "id": str(g.id),
        "name": "@everyone",
        "permissions": ALL_PERMISSIONS,
        "position": 0,
        "color": 0,
        "hoist": False,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }
    members = [member(u) for u in state.users.values()]
    return {
        "id": str(g.id),
        "name": g.name,
        "owner_id": str(g.owner_id),
        "unavailable": False,
        "member_count": len(members),
        "large": False,
        "joined_at": now_iso(),
        "roles": [everyone],
        "emojis": [],
        "stickers": [],
        "features": [],
        "channels": [channel(c) for c in channels if not c.is_thread],
        "threads": [channel(c) for c in channels if c.is_thread and not c.archived],
        "members": members,
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "premium_tier": 0,
        "preferred_locale": "en-US",
    }


def message(state: FakeState, m: FakeMessage) -> JSON:
    author = user(m.author)
    if m.webhook_id is not None and m.persona_username is not None:
        # A webhook's message carries the persona asked for, with the webhook's id as author id
        author = {**author, "id": str(m.webhook_id), "username": m.persona_username, "bot": True}
        author["avatar"] = None
    data: JSON = {
        "id": str(m.id),
        "channel_id": str(m.channel_id),
        "guild_id": str(m.guild_id),
        "author": author,
        "content": m.content,
        "timestamp": now_iso(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "type": m.type,
        "flags": 0,
        "components": [],
    }
    if m.webhook_id is not None:
        data["webhook_id"] = str(m.webhook_id)
    else:
        data["member"] = {k: v for k, v in member(m.author).items() if k != "user"}
    if m.reply_to is not None:
        reference = {"message_id": str(m.reply_to), "channel_id": str(m.channel_id)}
        data["message_reference"] = {**reference, "guild_id": str(m.guild_id), "type": 0}
    if m.interaction_id is not None:
        data["application_id"] = str(state.application_id)
    if m.nonce is not None:
        data["nonce"] = m.nonce
    return data


def webhook(state: FakeState, w: FakeWebhook) -> JSON:
    creator = next(u for u in state.users.values() if u.id == w.creator_id)
    return {
        "id": str(w.id),
        "type": 1,
        "guild_id": str(w.guild_id),
        "channel_id": str(w.channel_id),
        "name": w.name,
        "avatar": w.avatar,
        "token": w.token,
        "application_id": str(state.application_id),
        "user": user(creator),
    }


def command(state: FakeState, c: FakeCommand) -> JSON:
    data: JSON = {
        "id": str(c.id),
        "application_id": str(state.application_id),
        "type": c.type,
        "name": c.name,
        "description": c.description,
        "options": c.options,
        "default_member_permissions": None,
        "dm_permission": True,
        "nsfw": False,
        "version": str(c.id),
    }
    if c.guild_id is not None:
        data["guild_id"] = str(c.guild_id)
    return data


def interaction(state: FakeState, i: FakeInteraction, options: list[JSON]) -> JSON:
    data: JSON = {
        "id": str(i.command.id),
        "name": i.command.name,
        "type": i.command.type,
        "options": options,
    }
    if i.command.guild_id is not None:
        data["guild_id"] = str(i.command.guild_id)
    return {
        "id": str(i.id),
        "application_id": str(state.application_id),
        "type": 2,
        "data": data,
        "guild_id": str(i.guild_id),
        "channel_id": str(i.channel_id),
        "channel": channel(state.channels[i.channel_id]),
        "member": member(i.user),
        "token": i.token,
        "version": 1,
        "app_permissions": ALL_PERMISSIONS,
        "locale": "en-US",
        "guild_locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": {"0": str(i.guild_id)},
        "context": 0,
        "attachment_size_limit": 10 * 1024 * 1024,
    }
