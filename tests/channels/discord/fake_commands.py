"""The fake's application commands: syncing them, and recording how the bot answers the
interactions a test starts (callbacks and followups, with the messages they post)."""

from __future__ import annotations

import secrets

from aiohttp import web

from tests.channels.discord import fake_payloads as payloads
from tests.channels.discord.fake_gateway import FakeGateway, deliver
from tests.channels.discord.fake_http import (
    API,
    json_response,
    message_content,
    read_body,
    read_json,
    required_text,
    waited,
)
from tests.channels.discord.fake_state import (
    JSON,
    FakeCommand,
    FakeError,
    FakeInteraction,
    FakeMessage,
    FakeState,
    InteractionReply,
)

INTERACTION_CALLBACK = "/interactions/{interaction_id}/{interaction_token}/callback"
CHANNEL_MESSAGE_WITH_SOURCE, DEFERRED_CHANNEL_MESSAGE = 4, 5
EPHEMERAL = 1 << 6
APPLICATION_COMMAND_MESSAGE = 20


class FakeApplications:
    def __init__(self, state: FakeState, gateway: FakeGateway) -> None:
        self.state = state
        self.gateway = gateway

    def routes(self) -> list[web.RouteDef]:
        commands = API + "/applications/{application_id}/commands"
        guild_commands = API + "/applications/{application_id}/guilds/{guild_id}/commands"
        return [
            web.put(commands, self.put_commands),
            web.get(commands, self.get_commands),
            web.put(guild_commands, self.put_commands),
            web.get(guild_commands, self.get_commands),
            web.post(API + INTERACTION_CALLBACK, self.interaction_callback),
        ]

    async def put_commands(self, request: web.Request) -> web.Response:
        guild_id = request.match_info.get("guild_id")
        scope = int(guild_id) if guild_id is not None else None
        body = await read_json(request)
        if not isinstance(body, list) or not all(isinstance(item, dict) for item in body):
            raise FakeError(400, 50035, "Invalid Form Body: expected a list of commands")
        kept = {c.name: c for c in self.state.commands.values() if c.guild_id == scope}
        for command in kept.values():
            del self.state.commands[command.id]
        synced = [self._command(item, kept.get(str(item.get("name"))), scope) for item in body]
        return json_response([payloads.command(self.state, c) for c in synced])

    def _command(self, item: JSON, previous: FakeCommand | None, scope: int | None) -> FakeCommand:
        command = FakeCommand(
            id=previous.id if previous else self.state.new_id(),
            name=required_text(item, "name", limit=32),
            description=str(item.get("description", "")),
            options=list(item.get("options") or []),
            guild_id=scope,
            type=int(item.get("type", 1)),
        )
        self.state.commands[command.id] = command
        return command

    async def get_commands(self, request: web.Request) -> web.Response:
        guild_id = request.match_info.get("guild_id")
        scope = int(guild_id) if guild_id is not None else None
        found = [c for c in self.state.commands.values() if c.guild_id == scope]
        return json_response([payloads.command(self.state, c) for c in found])

    async def interaction_callback(self, request: web.Request) -> web.StreamResponse:
        interaction = self._interaction(
            request.match_info["interaction_token"], int(request.match_info["interaction_id"])
        )
        if any(
            r.interaction_id == interaction.id and r.kind == "callback" for r in self.state.replies
        ):
            raise FakeError(400, 40060, "Interaction has already been acknowledged.")
        body = await read_body(request)
        kind, data = int(body.get("type", 0)), dict(body.get("data") or {})
        self.state.replies.append(InteractionReply(interaction.id, "callback", kind, data))
        message = None
        if kind == CHANNEL_MESSAGE_WITH_SOURCE:
            message = await self._interaction_message(interaction, data)
        if request.query.get("with_response") not in ("1", "true", "True"):
            return web.Response(status=204)
        return json_response(_callback_answer(interaction, kind, data, message))

    async def followup(self, request: web.Request, token: str) -> web.Response:
        interaction = self._interaction(token)
        body = await read_body(request)
        self.state.replies.append(InteractionReply(interaction.id, "followup", None, body))
        return waited(request, await self._interaction_message(interaction, body))

    async def _interaction_message(self, interaction: FakeInteraction, data: JSON) -> JSON:
        """The answer's message; an ephemeral one is shown to its user only, so it is neither
        kept in the channel nor dispatched."""
        channel = self.state.channel(interaction.channel_id)
        message = FakeMessage(
            id=self.state.new_id(),
            channel_id=channel.id,
            guild_id=channel.guild_id,
            author=self.state.bot,
            content=message_content(data),
            type=APPLICATION_COMMAND_MESSAGE,
            webhook_id=self.state.application_id,
            interaction_id=interaction.id,
        )
        if _flags(data) & EPHEMERAL:
            return payloads.message(self.state, message)
        return await deliver(self.state, self.gateway, message)

    def _interaction(self, token: str, interaction_id: int | None = None) -> FakeInteraction:
        for interaction in self.state.interactions.values():
            wanted = interaction_id is None or interaction.id == interaction_id
            if wanted and secrets.compare_digest(interaction.token, token):
                return interaction
        raise FakeError(404, 10062, "Unknown interaction")


def _callback_answer(
    interaction: FakeInteraction, kind: int, data: JSON, message: JSON | None
) -> JSON:
    answer: JSON = {
        "interaction": {
            "id": str(interaction.id),
            "type": 2,
            "response_message_loading": kind == DEFERRED_CHANNEL_MESSAGE,
            "response_message_ephemeral": bool(_flags(data) & EPHEMERAL),
        }
    }
    if message is not None:
        answer["interaction"]["response_message_id"] = message["id"]
        answer["resource"] = {"type": kind, "message": message}
    return answer


def _flags(data: JSON) -> int:
    return int(data.get("flags") or 0)
