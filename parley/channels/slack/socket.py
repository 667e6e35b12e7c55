"""The Socket Mode websocket of one session, on slack_sdk's aiohttp client: its requests
(``events_api``, ``slash_commands``, …) handed to Parley's handler, which acknowledges each by
its ``envelope_id``. The client never reconnects by itself: a socket that closes, or Slack's
``disconnect`` envelope (a refresh, a rotation), ends the session, and the account's
reconnection loop opens the next with the newest tokens."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

RequestHandler = Callable[["ParleySocket", SocketModeRequest], Awaitable[None]]


class ParleySocket(SocketModeClient):
    def __init__(
        self, app_token: str, web_client: AsyncWebClient, handle: RequestHandler,
        ended: asyncio.Event,
    ) -> None:  # fmt: skip
        super().__init__(app_token=app_token, web_client=web_client, logger=log,
                         auto_reconnect_enabled=False)  # fmt: skip
        self.ended = ended
        self.socket_mode_request_listeners.append(handle)  # type: ignore[arg-type]

    async def run_message_listeners(self, message: dict[str, Any], raw_message: str) -> None:
        if message.get("type") == "disconnect":
            self.ended.set()  # the library would reconnect with the token it holds
            return
        await super().run_message_listeners(message, raw_message)

    def lost(self) -> bool:
        session = self.current_session
        return session is None or session.closed

    async def ack(self, envelope_id: str, payload: dict[str, Any] | None = None) -> None:
        await self.send_socket_mode_response(SocketModeResponse(envelope_id, payload))

    async def open(self) -> None:
        await self.connect()  # type: ignore[no-untyped-call]

    async def shut(self) -> None:
        await self.close()  # type: ignore[no-untyped-call]
