"""The fake Discord's world and its record: guilds, channels, threads, messages, webhooks,
application commands, interactions, and every REST call the bot made."""

from __future__ import annotations

import itertools
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

DISCORD_EPOCH_MS = 1_420_070_400_000

# Channel types (Discord's numbers)
GUILD_TEXT = 0
PUBLIC_THREAD = 11
PRIVATE_THREAD = 12
THREAD_TYPES = (PUBLIC_THREAD, PRIVATE_THREAD)

# Gateway intents the fake filters on
INTENT_GUILDS = 1 << 0
INTENT_GUILD_MESSAGES = 1 << 9
INTENT_MESSAGE_CONTENT = 1 << 15


class FakeError(Exception):
    """A Discord error answer: HTTP status, Discord's JSON error code and message."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(f"{status} {message}")
        self.status = status
        self.code = code
        self.message = message


@dataclass
class FakeUser:
    id: int
    username: str
    bot: bool = False


@dataclass
class FakeGuild:
    id: int
    name: str
    owner_id: int


@dataclass
class FakeChannel:
    """A guild text channel, or a thread when ``parent_id`` is set."""

    id: int
    guild_id: int
    name: str
    type: int = GUILD_TEXT
    parent_id: int | None = None
    owner_id: int | None = None
    archived: bool = False
    locked: bool = False
    auto_archive_duration: int = 1440
    message_count: int = 0

    @property
    def is_thread(self) -> bool:
        return self.type in THREAD_TYPES


@dataclass
class FakeMessage:
    id: int
    channel_id: int
    guild_id: int
    author: FakeUser
    content: str
    type: int = 0
    webhook_id: int | None = None
    # The persona a webhook execute asked for (username / avatar_url)
    persona_username: str | None = None
    persona_avatar_url: str | None = None
    interaction_id: int | None = None
    reply_to: int | None = None  # the message it answers (message_reference)
    nonce: str | None = None  # what the sender gave to recognise its own message


@dataclass
class FakeWebhook:
    id: int
    channel_id: int
    guild_id: int
    name: str
    token: str
    creator_id: int
    avatar: str | None = None


@dataclass
class FakeCommand:
    id: int
    name: str
    description: str
    options: list[JSON]
    guild_id: int | None = None
    type: int = 1


@dataclass
class FakeInteraction:
    id: int
    token: str
    channel_id: int
    guild_id: int
    user: FakeUser
    command: FakeCommand


@dataclass
class InteractionReply:
    """What the bot answered to an interaction: its callback, or a followup message."""

    interaction_id: int
    kind: str  # "callback" or "followup"
    type: int | None  # the callback's response type; None for a followup
    data: JSON


@dataclass
class RestCall:
    method: str
    path: str  # as requested, without the /api/v10 prefix
    route: str  # the route template, e.g. /channels/{channel_id}/messages
    token: str | None  # the bot token it carried, without "Bot "
    status: int = 0


@dataclass
class PlannedFailure:
    method: str
    route: str  # a route template or a concrete path
    status: int
    remaining: int
    retry_after: float


@dataclass
class FakeState:
    """Everything the fake knows and everything the bot did, for tests to inspect."""

    bot: FakeUser
    application_id: int
    tokens: set[str]
    guilds: dict[int, FakeGuild] = field(default_factory=dict)
    channels: dict[int, FakeChannel] = field(default_factory=dict)
    users: dict[str, FakeUser] = field(default_factory=dict)
    messages: dict[int, list[FakeMessage]] = field(default_factory=dict)
    webhooks: dict[int, FakeWebhook] = field(default_factory=dict)
    commands: dict[int, FakeCommand] = field(default_factory=dict)
    interactions: dict[int, FakeInteraction] = field(default_factory=dict)
    replies: list[InteractionReply] = field(default_factory=list)
    calls: list[RestCall] = field(default_factory=list)
    failures: list[PlannedFailure] = field(default_factory=list)
    deleted_channels: dict[int, FakeChannel] = field(default_factory=dict)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @classmethod
    def create(cls, token: str) -> FakeState:
        ids = itertools.count(1)
        bot = FakeUser(id=snowflake(next(ids)), username="parley-bot", bot=True)
        state = cls(bot=bot, application_id=snowflake(next(ids)), tokens={token}, _counter=ids)
        state.users[bot.username] = bot
        return state

    def new_id(self) -> int:
        return snowflake(next(self._counter))

    def user(self, name: str) -> FakeUser:
        """The (human) user of that name, created on first mention with a stable id."""
        if name not in self.users:
            self.users[name] = FakeUser(id=self.new_id(), username=name)
        return self.users[name]

    def add_guild(self, name: str, owner: FakeUser) -> FakeGuild:
        guild = FakeGuild(id=self.new_id(), name=name, owner_id=owner.id)
        self.guilds[guild.id] = guild
        return guild

    def add_text_channel(self, guild_id: int, name: str) -> FakeChannel:
        channel = FakeChannel(id=self.new_id(), guild_id=guild_id, name=name)
        self.channels[channel.id] = channel
        return channel

    def guild_channels(self, guild_id: int) -> list[FakeChannel]:
        return [c for c in self.channels.values() if c.guild_id == guild_id]

    def channel(self, channel_id: int) -> FakeChannel:
        if channel_id not in self.channels:
            raise FakeError(404, 10003, "Unknown Channel")
        return self.channels[channel_id]

    def message(self, channel_id: int, message_id: int) -> FakeMessage:
        for message in self.messages.get(channel_id, []):
            if message.id == message_id:
                return message
        raise FakeError(404, 10008, "Unknown Message")

    def webhook(self, webhook_id: int, token: str) -> FakeWebhook:
        webhook = self.webhooks.get(webhook_id)
        if webhook is None or not secrets.compare_digest(webhook.token, token):
            raise FakeError(404, 10015, "Unknown Webhook")
        return webhook

    def add_message(self, message: FakeMessage) -> FakeMessage:
        self.messages.setdefault(message.channel_id, []).append(message)
        channel = self.channels[message.channel_id]
        if channel.is_thread:
            channel.message_count += 1
        return message

    def nonced(self, channel_id: int, author_id: int, nonce: str) -> FakeMessage | None:
        """A message with this nonce by this author in the channel: Discord answers it again,
        instead of posting, when the sender asks with ``enforce_nonce`` (for a few minutes; the
        fake remembers for its life)."""
        for message in self.messages.get(channel_id, []):
            if message.nonce == nonce and message.author.id == author_id:
                return message
        return None

    def take_failure(self, method: str, route: str, path: str) -> PlannedFailure | None:
        for failure in self.failures:
            if failure.method == method and failure.route in (route, path):
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self.failures.remove(failure)
                return failure
        return None

    def token_is_valid(self, token: str | None) -> bool:
        return token is not None and any(secrets.compare_digest(token, t) for t in self.tokens)

    # Views for assertions

    def texts(self, channel_id: int) -> list[str]:
        return [m.content for m in self.messages.get(channel_id, [])]

    def threads(self) -> list[FakeChannel]:
        return [c for c in self.channels.values() if c.is_thread]

    def calls_to(self, method: str, route: str) -> list[RestCall]:
        return [c for c in self.calls if c.method == method and c.route == route]


def snowflake(sequence: int) -> int:
    """A Discord-shaped id: milliseconds since Discord's epoch, then a per-fake sequence."""
    return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) | (sequence & 0x3FFFFF)
