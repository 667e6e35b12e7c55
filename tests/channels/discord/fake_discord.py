"""A local fake Discord (REST API v10 and gateway, over loopback) that discord.py really logs in to.

Tests of Discord code run the real client library against it: ``FakeDiscord`` is an aiohttp
server on 127.0.0.1 at a free port, with one bot application, one guild and its ``#general``.
``pointed_at(fake)`` sets ``discord.http.Route.BASE`` and ``DiscordWebSocket.DEFAULT_GATEWAY``
to it for the duration of a test (a plain ``discord.Client`` never asks ``/gateway/bot``: it
dials that default); the ``fake_discord`` fixture of this folder's conftest does both. The test
acts as the people on Discord (``user_says``, ``user_starts_thread``, ``user_runs_command``) and
as Discord itself (``rotate_token``, ``fail_next``, ``drop_next``, ``drop_gateway``,
``archive_thread``, ``delete_thread``), then inspects ``fake.state``, which records
what the bot did: messages per channel or thread (author, webhook persona, reply), threads,
webhooks, commands, interaction replies, and every REST call with its bot token and status.
``fake.wait_until(condition)`` waits for the state to change; ``bot_harness`` has a client.

What it speaks
  - Login: ``GET /users/@me``, ``GET /oauth2/applications/@me`` (discord.py reads the
    application id there), ``GET /gateway/bot``.
  - Gateway (JSON text frames; discord.py asks for zlib-stream but inflates binary frames only,
    so plain text needs nothing): HELLO, IDENTIFY → READY → GUILD_CREATE per guild (channels,
    unarchived threads, members), heartbeat → ACK, dispatches numbered per session, RESUME
    replaying what the session missed, then RESUMED. Events are filtered by intents (GUILDS,
    GUILD_MESSAGES) and others' message content is blanked without MESSAGE_CONTENT.
    ``add_text_channel`` dispatches CHANNEL_CREATE.
  - Messages: ``POST``/``GET /channels/{id}/messages``, ``GET …/messages/{mid}``; replies keep
    their ``message_reference``; every message, the bot's own included, is dispatched as
    MESSAGE_CREATE. Posting in an archived thread unarchives it (403 when it is locked).
  - Threads: ``POST /channels/{id}/threads``, ``POST /channels/{id}/messages/{mid}/threads``
    (the thread takes the message's id) → THREAD_CREATE; ``PATCH /channels/{id}`` (name,
    archived, locked) → THREAD_UPDATE / CHANNEL_UPDATE; ``DELETE /channels/{id}`` →
    THREAD_DELETE / CHANNEL_DELETE.
  - Webhooks: ``POST``/``GET /channels/{id}/webhooks``, ``POST /webhooks/{id}/{token}`` with
    ``wait`` and ``thread_id`` and a ``username``/``avatar_url`` persona; their messages carry
    ``webhook_id``. ``user_says(…, webhook_id=…)`` and ``user_says(…, type=…)`` make foreign
    webhook and system messages, for echo protection.
  - Application commands: ``PUT``/``GET /applications/{app}/commands`` and the guild variant;
    ``user_runs_command`` dispatches INTERACTION_CREATE with options typed as synced;
    ``POST /interactions/{id}/{token}/callback`` (a second one is refused with 40060) and
    followups ``POST /webhooks/{app}/{token}`` are recorded in ``state.replies``; their messages
    are kept and dispatched (type 20, ``webhook_id`` = the application id) unless ephemeral.
  - Tokens: REST with an unknown bot token → 401; IDENTIFY/RESUME with one → close 4004.
    ``rotate_token`` makes the old token invalid at once and, like a token reset, ends its
    gateway sessions with 4004 (``end_sessions=False`` keeps them, to test REST alone);
    ``fake.token`` is always the newest.
  - Failures: ``fail_next(method, route, status=…, times=…)`` answers the next calls to a route
    (its template such as ``/channels/{channel_id}/messages``, or a concrete path) with 429 +
    ``retry_after`` (and the ``Via`` header discord.py requires before it retries), 5xx
    (discord.py retries after 1 s, 3 s, …, five tries in all), 403 or 404 (not retried).
  - Nonces: a message posted with ``nonce`` and ``enforce_nonce`` whose nonce the bot used in
    that channel before is not posted again: the first one is answered (Discord does so for a
    few minutes; the fake for its life). ``drop_next(method, route)`` cuts a call's connection
    unanswered, as a network failure does.
  - Disconnects: ``drop_gateway()`` closes the sockets with 4000; discord.py resumes.
    ``refuse_resume = True`` answers RESUME with INVALID_SESSION; discord.py then waits 5 s in
    ``Client.before_identify_hook`` before it identifies again (``bot_harness.Bot`` skips it).

What it does not: voice, DMs, forum channels, reactions, message edits and deletes, editing an
interaction's original response, file uploads (multipart bodies are read for ``payload_json``
only), member chunking, presences, sharding, real rate-limit buckets, permission checks (the
bot may do everything unless a test plans a 403), thread members, and the system message
Discord posts when a thread starts. A route it does not speak answers 404 in Discord's error
shape and is still recorded in ``state.calls``: that is where to look when a new call fails.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Self

import discord
import yarl
from aiohttp import web
from discord.gateway import DiscordWebSocket

from tests.channels.discord import fake_payloads as payloads
from tests.channels.discord.fake_gateway import CLOSE_UNKNOWN_ERROR, FakeGateway, deliver
from tests.channels.discord.fake_http import API
from tests.channels.discord.fake_rest import FakeRest
from tests.channels.discord.fake_state import (
    JSON,
    PUBLIC_THREAD,
    FakeChannel,
    FakeCommand,
    FakeInteraction,
    FakeMessage,
    FakeState,
    FakeUser,
    PlannedFailure,
)

DROPPED = 0  # a planned failure that cuts the connection instead of answering
HANG_GUARD = 30  # seconds: a wait that never ends is a failure, not a hung suite
OPTION_TYPES = {bool: 5, int: 4, float: 10, str: 3}  # Python value → Discord option type


class FakeDiscord:
    """One fake Discord with one bot application, one guild and its #general channel."""

    def __init__(self, token: str = "fake-bot-token") -> None:
        self.state = FakeState.create(token)
        self.changed = asyncio.Condition()
        self.gateway = FakeGateway(self.state, self.changed)
        self.rest = FakeRest(self.state, self.gateway, self.changed)
        self.guild = self.state.add_guild("Parley Test", owner=self.state.user("owner"))
        self.channel = self.state.add_text_channel(self.guild.id, "general")
        self.url = ""
        self.token = token  # the newest valid bot token
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application(middlewares=[self.rest.middleware])
        app.add_routes([*self.rest.routes(), web.get("/gateway", self.gateway.handle)])
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        self.gateway.url = f"ws://127.0.0.1:{port}/gateway"

    async def stop(self) -> None:
        await self.gateway.drop(code=1001)
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # The world

    async def add_text_channel(self, name: str) -> FakeChannel:
        """A new text channel in the guild, announced to connected bots with CHANNEL_CREATE."""
        channel = self.state.add_text_channel(self.guild.id, name)
        await self.gateway.dispatch("CHANNEL_CREATE", payloads.channel(channel))
        return channel

    # Acting as the people on Discord

    async def user_says(
        self,
        channel_id: int,
        author: str,
        content: str,
        *,
        type: int = 0,
        webhook_id: int | None = None,
    ) -> FakeMessage:
        """A message appears in a channel or thread: from a person, or from a webhook
        (``webhook_id``, the author then being the persona ``author``), or a system message
        (``type`` other than 0, e.g. 18 for "thread created")."""
        channel = self.state.channel(channel_id)
        if webhook_id is None:
            person = self.state.user(author)
        else:
            person = FakeUser(id=webhook_id, username=author, bot=True)
        message = FakeMessage(
            id=self.state.new_id(),
            channel_id=channel.id,
            guild_id=channel.guild_id,
            author=person,
            content=content,
            type=type,
            webhook_id=webhook_id,
            persona_username=author if webhook_id is not None else None,
        )
        await deliver(self.state, self.gateway, message)
        await self._notify()
        return message

    async def user_starts_thread(self, channel_id: int, author: str, name: str) -> FakeChannel:
        """A person starts a public thread in a text channel; bots get THREAD_CREATE."""
        parent = self.state.channel(channel_id)
        thread = FakeChannel(
            id=self.state.new_id(),
            guild_id=parent.guild_id,
            name=name,
            type=PUBLIC_THREAD,
            parent_id=parent.id,
            owner_id=self.state.user(author).id,
        )
        self.state.channels[thread.id] = thread
        await self.gateway.dispatch(
            "THREAD_CREATE", {**payloads.channel(thread), "newly_created": True}
        )
        await self._notify()
        return thread

    async def archive_thread(self, thread_id: int) -> None:
        """Discord archives a thread (idle past its auto-archive duration, or a moderator)."""
        thread = self.state.channel(thread_id)
        thread.archived = True
        await self.gateway.dispatch("THREAD_UPDATE", payloads.channel(thread))

    async def delete_thread(self, thread_id: int) -> None:
        """A moderator deletes a thread: it is gone, and bots get THREAD_DELETE."""
        thread = self.state.channel(thread_id)
        self.state.deleted_channels[thread.id] = self.state.channels.pop(thread.id)
        data = payloads.channel(thread)
        await self.gateway.dispatch(
            "THREAD_DELETE", {k: data[k] for k in ("id", "guild_id", "parent_id", "type")}
        )

    async def user_runs_command(
        self, channel_id: int, author: str, name: str, options: dict[str, Any] | None = None
    ) -> FakeInteraction:
        """A person runs a synced slash command; the bot gets INTERACTION_CREATE."""
        channel = self.state.channel(channel_id)
        command = self._synced_command(name)
        interaction = FakeInteraction(
            id=self.state.new_id(),
            token=secrets.token_urlsafe(32),
            channel_id=channel.id,
            guild_id=channel.guild_id,
            user=self.state.user(author),
            command=command,
        )
        self.state.interactions[interaction.id] = interaction
        data = payloads.interaction(
            self.state, interaction, _options(command.options, options or {})
        )
        await self.gateway.dispatch("INTERACTION_CREATE", data)
        return interaction

    def _synced_command(self, name: str) -> FakeCommand:
        commands = self.state.commands.values()
        guild_first = sorted(commands, key=lambda c: c.guild_id is None)
        for command in guild_first:
            if command.name == name and command.guild_id in (None, self.guild.id):
                return command
        raise LookupError(f"no application command {name!r} was synced")

    # Acting as Discord

    async def rotate_token(self, new_token: str | None = None, *, end_sessions: bool = True) -> str:
        """Reset the bot token: the old ones stop working at once; returns the new one."""
        new_token = new_token or secrets.token_urlsafe(32)
        old_tokens = set(self.state.tokens)
        self.state.tokens = {new_token}
        self.token = new_token
        if end_sessions:
            for old in old_tokens:
                await self.gateway.end_sessions_of(old)
        return new_token

    def fail_next(
        self,
        method: str,
        route: str,
        *,
        status: int = 429,
        times: int = 1,
        retry_after: float = 0.05,
    ) -> None:
        """Answer the next ``times`` calls to ``method route`` with ``status``."""
        if status < 400 or times < 1 or retry_after < 0:
            raise ValueError(
                "a planned failure needs a status >= 400, times >= 1, retry_after >= 0"
            )
        self.state.failures.append(PlannedFailure(method, route, status, times, retry_after))

    def drop_next(self, method: str, route: str, *, times: int = 1) -> None:
        """Cut the connection of the next ``times`` calls to ``method route`` before any answer
        (a network failure: the client cannot know whether the call was taken; the fake did
        not take it)."""
        self.state.failures.append(PlannedFailure(method, route, DROPPED, times, 0))

    async def drop_gateway(self, code: int = CLOSE_UNKNOWN_ERROR) -> None:
        await self.gateway.drop(code)

    @property
    def refuse_resume(self) -> bool:
        return self.gateway.refuse_resume

    @refuse_resume.setter
    def refuse_resume(self, value: bool) -> None:
        self.gateway.refuse_resume = value

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        """Wait until the fake's state satisfies ``condition`` (checked after every change)."""
        async with asyncio.timeout(HANG_GUARD), self.changed:
            await self.changed.wait_for(condition)

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()


def _options(declared: list[JSON], given: dict[str, Any]) -> list[JSON]:
    """The interaction's options, typed as the synced command declared them."""
    types = {str(o.get("name")): int(o.get("type", 3)) for o in declared}
    unknown = set(given) - set(types)
    if unknown:
        raise ValueError(f"the command has no option(s) {sorted(unknown)}")
    return [
        {"name": name, "type": types[name] or OPTION_TYPES[type(value)], "value": value}
        for name, value in given.items()
    ]


@contextmanager
def pointed_at(fake: FakeDiscord) -> Iterator[None]:
    """discord.py talks to ``fake`` (REST base and default gateway) inside this block."""
    saved_base, saved_gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = fake.url + API
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway.url)
    try:
        yield
    finally:
        discord.http.Route.BASE = saved_base
        DiscordWebSocket.DEFAULT_GATEWAY = saved_gateway
