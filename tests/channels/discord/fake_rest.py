"""The fake's REST API v10: the routes a bot uses to log in, post, thread, run webhooks and
answer application commands; every call is recorded with its token, and can be made to fail."""

from __future__ import annotations

import asyncio
import secrets

from aiohttp import web

from tests.channels.discord import fake_payloads as payloads
from tests.channels.discord.fake_commands import INTERACTION_CALLBACK, FakeApplications
from tests.channels.discord.fake_gateway import FakeGateway, deliver
from tests.channels.discord.fake_http import (
    API,
    Handler,
    bot_token,
    error_response,
    json_response,
    message_content,
    planned_failure_response,
    read_body,
    required_text,
    waited,
)
from tests.channels.discord.fake_state import (
    GUILD_TEXT,
    JSON,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    THREAD_TYPES,
    FakeChannel,
    FakeError,
    FakeMessage,
    FakeState,
    FakeUser,
    FakeWebhook,
    RestCall,
)

WEBHOOK_EXECUTE = "/webhooks/{webhook_id}/{webhook_token}"
# Routes authenticated by the token in their path, not by the bot token.
PATH_TOKEN_ROUTES = {WEBHOOK_EXECUTE, INTERACTION_CALLBACK}


class FakeRest:
    def __init__(self, state: FakeState, gateway: FakeGateway, changed: asyncio.Condition) -> None:
        self.state = state
        self.gateway = gateway
        self.changed = changed
        self.applications = FakeApplications(state, gateway)

    def routes(self) -> list[web.RouteDef]:
        channel = API + "/channels/{channel_id}"
        return [
            web.get(API + "/users/@me", self.me),
            web.get(API + "/oauth2/applications/@me", self.application),
            web.get(API + "/applications/@me", self.application),
            web.get(API + "/gateway", self.gateway_url),
            web.get(API + "/gateway/bot", self.gateway_url),
            web.get(channel, self.get_channel),
            web.patch(channel, self.edit_channel),
            web.delete(channel, self.delete_channel),
            web.get(channel + "/messages", self.list_messages),
            web.post(channel + "/messages", self.post_message),
            web.get(channel + "/messages/{message_id}", self.get_message),
            web.post(channel + "/threads", self.start_thread),
            web.post(channel + "/messages/{message_id}/threads", self.start_thread_from_message),
            web.post(channel + "/webhooks", self.create_webhook),
            web.get(channel + "/webhooks", self.list_webhooks),
            web.post(API + WEBHOOK_EXECUTE, self.execute_webhook),
            *self.applications.routes(),
        ]

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith(API + "/"):
            return await handler(request)
        resource = request.match_info.route.resource
        template = resource.canonical if resource is not None else request.path
        call = RestCall(
            method=request.method,
            path=request.path.removeprefix(API),
            route=template.removeprefix(API),
            token=bot_token(request),
        )
        self.state.calls.append(call)
        response = await self._answer(request, handler, call)
        call.status = response.status
        async with self.changed:
            self.changed.notify_all()
        return response

    async def _answer(
        self, request: web.Request, handler: Handler, call: RestCall
    ) -> web.StreamResponse:
        if call.route not in PATH_TOKEN_ROUTES and not self.state.token_is_valid(call.token):
            return error_response(401, 0, "401: Unauthorized")
        failure = self.state.take_failure(call.method, call.route, call.path)
        if failure is not None and failure.status == 0:  # cut, unanswered
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError
        if failure is not None:
            return planned_failure_response(failure)
        try:
            return await handler(request)
        except FakeError as exc:
            return error_response(exc.status, exc.code, exc.message)
        except ValueError:  # an id or number that does not parse
            return error_response(400, 50035, "Invalid Form Body")
        except web.HTTPException as exc:  # a route the fake does not speak, in Discord's shape
            return error_response(exc.status, 0, f"{exc.status}: {exc.reason}")

    # Login

    async def me(self, request: web.Request) -> web.Response:
        return json_response(payloads.user(self.state.bot))

    async def application(self, request: web.Request) -> web.Response:
        return json_response(payloads.application(self.state))

    async def gateway_url(self, request: web.Request) -> web.Response:
        limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
        return json_response({"url": self.gateway.url, "shards": 1, "session_start_limit": limit})

    # Channels and threads

    async def get_channel(self, request: web.Request) -> web.Response:
        return json_response(payloads.channel(self._channel(request)))

    async def edit_channel(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        body = await read_body(request)
        channel.name = str(body.get("name", channel.name))
        if channel.is_thread:
            channel.archived = bool(body.get("archived", channel.archived))
            channel.locked = bool(body.get("locked", channel.locked))
            duration = body.get("auto_archive_duration", channel.auto_archive_duration)
            channel.auto_archive_duration = int(duration)
        data = payloads.channel(channel)
        event = "THREAD_UPDATE" if channel.is_thread else "CHANNEL_UPDATE"
        await self.gateway.dispatch(event, data)
        return json_response(data)

    async def delete_channel(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        gone = [channel, *(t for t in self.state.threads() if t.parent_id == channel.id)]
        for each in gone:
            self.state.deleted_channels[each.id] = self.state.channels.pop(each.id)
        data = payloads.channel(channel)
        if channel.is_thread:
            thread_ref = {k: data[k] for k in ("id", "guild_id", "parent_id", "type")}
            await self.gateway.dispatch("THREAD_DELETE", thread_ref)
        else:
            await self.gateway.dispatch("CHANNEL_DELETE", data)
        return json_response(data)

    async def start_thread(self, request: web.Request) -> web.Response:
        parent = self._text_channel(request)
        body = await read_body(request)
        kind = int(body.get("type", PRIVATE_THREAD))
        if kind not in THREAD_TYPES:
            raise FakeError(400, 50035, "Invalid Form Body: type")
        return await self._open_thread(self.state.new_id(), parent, body, kind)

    async def start_thread_from_message(self, request: web.Request) -> web.Response:
        parent = self._text_channel(request)
        message = self.state.message(parent.id, int(request.match_info["message_id"]))
        if message.id in self.state.channels:
            raise FakeError(400, 160004, "A thread has already been created for this message")
        # Discord gives a thread started from a message the message's own id.
        return await self._open_thread(message.id, parent, await read_body(request), PUBLIC_THREAD)

    async def _open_thread(
        self, thread_id: int, parent: FakeChannel, body: JSON, kind: int
    ) -> web.Response:
        name = required_text(body, "name", limit=100)
        thread = FakeChannel(
            id=thread_id,
            guild_id=parent.guild_id,
            name=name,
            type=kind,
            parent_id=parent.id,
            owner_id=self.state.bot.id,
            auto_archive_duration=int(body.get("auto_archive_duration", 1440)),
        )
        self.state.channels[thread.id] = thread
        data = payloads.channel(thread)
        await self.gateway.dispatch("THREAD_CREATE", {**data, "newly_created": True})
        return json_response(data, status=201)

    # Messages

    async def list_messages(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        limit = int(request.query.get("limit", "50"))
        newest_first = list(reversed(self.state.messages.get(channel.id, [])))[:limit]
        return json_response([payloads.message(self.state, m) for m in newest_first])

    async def get_message(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        message = self.state.message(channel.id, int(request.match_info["message_id"]))
        return json_response(payloads.message(self.state, message))

    async def post_message(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        body = await read_body(request)
        content = message_content(body)
        nonce = _nonce(body)
        if nonce is not None and body.get("enforce_nonce"):
            seen = self.state.nonced(channel.id, self.state.bot.id, nonce)
            if seen is not None:
                return json_response(payloads.message(self.state, seen))
        await self._reopen_if_archived(channel)
        message = FakeMessage(
            nonce=nonce,
            id=self.state.new_id(),
            channel_id=channel.id,
            guild_id=channel.guild_id,
            author=self.state.bot,
            content=content,
            reply_to=self._replied_to(channel, body.get("message_reference")),
        )
        return json_response(await deliver(self.state, self.gateway, message))

    def _replied_to(self, channel: FakeChannel, reference: object) -> int | None:
        if not isinstance(reference, dict) or reference.get("message_id") is None:
            return None
        return self.state.message(channel.id, int(reference["message_id"])).id

    async def _reopen_if_archived(self, channel: FakeChannel) -> None:
        """Posting in an archived thread unarchives it, unless it is locked."""
        if not channel.archived:
            return
        if channel.locked:
            raise FakeError(403, 50083, "Thread is archived")
        channel.archived = False
        await self.gateway.dispatch("THREAD_UPDATE", payloads.channel(channel))

    # Webhooks

    async def create_webhook(self, request: web.Request) -> web.Response:
        channel = self._text_channel(request)
        body = await read_body(request)
        name = required_text(body, "name", limit=80)
        if any(word in name.lower() for word in ("discord", "clyde")):
            raise FakeError(400, 50035, "Invalid Form Body: name")
        webhook = FakeWebhook(
            id=self.state.new_id(),
            channel_id=channel.id,
            guild_id=channel.guild_id,
            name=name,
            token=secrets.token_urlsafe(48),
            creator_id=self.state.bot.id,
            avatar=body.get("avatar"),
        )
        self.state.webhooks[webhook.id] = webhook
        return json_response(payloads.webhook(self.state, webhook))

    async def list_webhooks(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        found = [w for w in self.state.webhooks.values() if w.channel_id == channel.id]
        return json_response([payloads.webhook(self.state, w) for w in found])

    async def execute_webhook(self, request: web.Request) -> web.Response:
        webhook_id, token = (
            int(request.match_info["webhook_id"]),
            request.match_info["webhook_token"],
        )
        if webhook_id == self.state.application_id:
            return await self.applications.followup(request, token)
        webhook = self.state.webhook(webhook_id, token)
        body = await read_body(request)
        channel = self._webhook_target(webhook, request.query.get("thread_id"))
        await self._reopen_if_archived(channel)
        message = FakeMessage(
            id=self.state.new_id(),
            channel_id=channel.id,
            guild_id=channel.guild_id,
            author=FakeUser(id=webhook.id, username=webhook.name, bot=True),
            content=message_content(body),
            webhook_id=webhook.id,
            persona_username=str(body.get("username") or webhook.name),
            persona_avatar_url=body.get("avatar_url"),
        )
        data = await deliver(self.state, self.gateway, message)
        return waited(request, data)

    def _webhook_target(self, webhook: FakeWebhook, thread_id: str | None) -> FakeChannel:
        if thread_id is None:
            return self.state.channel(webhook.channel_id)
        thread = self.state.channel(int(thread_id))
        if thread.parent_id != webhook.channel_id:
            raise FakeError(400, 10003, "Unknown Channel")
        return thread

    # Lookups

    def _channel(self, request: web.Request) -> FakeChannel:
        return self.state.channel(int(request.match_info["channel_id"]))

    def _text_channel(self, request: web.Request) -> FakeChannel:
        channel = self._channel(request)
        if channel.type != GUILD_TEXT:
            raise FakeError(400, 50024, "Cannot execute action on this channel type")
        return channel


def _nonce(body: JSON) -> str | None:
    nonce = body.get("nonce")
    if nonce is None:
        return None
    if not isinstance(nonce, str | int) or len(str(nonce)) > 25:
        raise FakeError(400, 50035, "Invalid Form Body: nonce must be 25 or fewer in length.")
    return str(nonce)
