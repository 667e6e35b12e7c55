"""The fake's gateway: a JSON websocket speaking HELLO, IDENTIFY, READY, GUILD_CREATE,
heartbeats, dispatches with sequence numbers, and RESUME with replay of what was missed."""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass, field

from aiohttp import WSMsgType, web

from tests.channels.discord import fake_payloads as payloads
from tests.channels.discord.fake_state import (
    INTENT_GUILD_MESSAGES,
    INTENT_GUILDS,
    INTENT_MESSAGE_CONTENT,
    JSON,
    FakeMessage,
    FakeState,
)

HEARTBEAT_INTERVAL_MS = 41_250
OP_DISPATCH, OP_HEARTBEAT, OP_IDENTIFY, OP_RESUME = 0, 1, 2, 6
OP_INVALID_SESSION, OP_HELLO, OP_HEARTBEAT_ACK = 9, 10, 11
CLOSE_DECODE_ERROR = 4002
CLOSE_AUTHENTICATION_FAILED = 4004
CLOSE_UNKNOWN_ERROR = 4000  # Discord's "reconnect and resume" close

# Which intent an event needs; events not listed (READY, RESUMED, INTERACTION_CREATE) need none.
EVENT_INTENTS = {
    "GUILD_CREATE": INTENT_GUILDS,
    "CHANNEL_CREATE": INTENT_GUILDS,
    "CHANNEL_UPDATE": INTENT_GUILDS,
    "CHANNEL_DELETE": INTENT_GUILDS,
    "THREAD_CREATE": INTENT_GUILDS,
    "THREAD_UPDATE": INTENT_GUILDS,
    "THREAD_DELETE": INTENT_GUILDS,
    "MESSAGE_CREATE": INTENT_GUILD_MESSAGES,
}


async def deliver(state: FakeState, gateway: FakeGateway, message: FakeMessage) -> JSON:
    """Store a message and dispatch its MESSAGE_CREATE, as Discord does for every message."""
    state.add_message(message)
    data = payloads.message(state, message)
    await gateway.dispatch("MESSAGE_CREATE", data)
    return data


@dataclass
class GatewaySession:
    """One identified bot session; it outlives its socket so that it can be resumed."""

    id: str
    token: str
    intents: int
    socket: web.WebSocketResponse | None
    sequence: int = 0
    sent: list[JSON] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def dispatch(self, event: str, data: JSON) -> None:
        async with self.lock:
            self.sequence += 1
            frame = {"op": OP_DISPATCH, "t": event, "s": self.sequence, "d": data}
            self.sent.append(frame)
            if self.socket is not None and not self.socket.closed:
                await self.socket.send_str(json.dumps(frame))

    async def replay_after(self, sequence: int, socket: web.WebSocketResponse) -> None:
        async with self.lock:
            self.socket = socket
            for frame in self.sent:
                if frame["s"] > sequence:
                    await socket.send_str(json.dumps(frame))


class FakeGateway:
    def __init__(self, state: FakeState, changed: asyncio.Condition) -> None:
        self.state = state
        self.changed = changed
        self.sessions: dict[str, GatewaySession] = {}
        self.sockets: set[web.WebSocketResponse] = set()
        self.refuse_resume = False
        self.identifies = 0
        self.resumes = 0
        self.url = ""  # set by the server once it knows its port

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.sockets.add(socket)
        try:
            await _send(
                socket, {"op": OP_HELLO, "d": {"heartbeat_interval": HEARTBEAT_INTERVAL_MS}}
            )
            async for frame in socket:
                if frame.type is not WSMsgType.TEXT:
                    break
                await self._receive(socket, json.loads(frame.data))
        finally:
            self.sockets.discard(socket)
            for session in self.sessions.values():
                if session.socket is socket:
                    session.socket = None
        return socket

    async def _receive(self, socket: web.WebSocketResponse, frame: JSON) -> None:
        op, data = frame.get("op"), frame.get("d")
        if op == OP_HEARTBEAT:
            await _send(socket, {"op": OP_HEARTBEAT_ACK})
        elif op not in (OP_IDENTIFY, OP_RESUME):
            return  # presence, voice and member requests are accepted and ignored
        elif not isinstance(data, dict):
            await socket.close(code=CLOSE_DECODE_ERROR, message=b"Error while decoding payload.")
        elif op == OP_IDENTIFY:
            await self._identify(socket, data)
        else:
            await self._resume(socket, data)

    async def _identify(self, socket: web.WebSocketResponse, data: JSON) -> None:
        token = _bare(data.get("token"))
        if not self.state.token_is_valid(token):
            await socket.close(code=CLOSE_AUTHENTICATION_FAILED, message=b"Authentication failed.")
            return
        session = GatewaySession(
            id=secrets.token_hex(16),
            token=token,
            intents=int(data.get("intents", 0)),
            socket=socket,
        )
        self.sessions[session.id] = session
        self.identifies += 1
        await session.dispatch("READY", self._ready(session))
        for guild in self.state.guilds.values():
            if session.intents & INTENT_GUILDS:
                await session.dispatch("GUILD_CREATE", payloads.guild(self.state, guild))
        await self._notify()

    async def _resume(self, socket: web.WebSocketResponse, data: JSON) -> None:
        token = _bare(data.get("token"))
        if not self.state.token_is_valid(token):
            await socket.close(code=CLOSE_AUTHENTICATION_FAILED, message=b"Authentication failed.")
            return
        session = self.sessions.get(str(data.get("session_id")))
        if self.refuse_resume or session is None or session.token != token:
            await _send(socket, {"op": OP_INVALID_SESSION, "d": False})
            return
        self.resumes += 1
        await session.replay_after(int(data.get("seq") or 0), socket)
        await session.dispatch("RESUMED", {})
        await self._notify()

    def _ready(self, session: GatewaySession) -> JSON:
        return {
            "v": 10,
            "user": payloads.user(self.state.bot),
            "guilds": [{"id": str(g), "unavailable": True} for g in self.state.guilds],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.url,
            "application": {"id": str(self.state.application_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
        }

    async def dispatch(self, event: str, data: JSON) -> None:
        """Send an event to every live or resumable session whose intents ask for it."""
        needed = EVENT_INTENTS.get(event, 0)
        for session in list(self.sessions.values()):
            if needed and not session.intents & needed:
                continue
            await session.dispatch(event, _as_seen_by(session, event, data, self.state.bot.id))

    async def drop(self, code: int = CLOSE_UNKNOWN_ERROR) -> None:
        """Close every socket the way a network hiccup or a gateway restart would."""
        for socket in list(self.sockets):
            await socket.close(code=code)

    async def end_sessions_of(self, token: str) -> None:
        """A rotated token's sessions end at once, as Discord ends them on a token reset."""
        for session_id, session in list(self.sessions.items()):
            if session.token == token:
                del self.sessions[session_id]
                if session.socket is not None:
                    await session.socket.close(
                        code=CLOSE_AUTHENTICATION_FAILED, message=b"Authentication failed."
                    )

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()


def _as_seen_by(session: GatewaySession, event: str, data: JSON, bot_id: int) -> JSON:
    """Without the message content intent, a bot sees other people's text as empty."""
    if event != "MESSAGE_CREATE" or session.intents & INTENT_MESSAGE_CONTENT:
        return data
    if data["author"]["id"] == str(bot_id):
        return data
    return {**data, "content": "", "embeds": [], "attachments": []}


def _bare(token: object) -> str:
    text = str(token or "")
    return text.removeprefix("Bot ")


async def _send(socket: web.WebSocketResponse, frame: JSON) -> None:
    await socket.send_str(json.dumps({"s": None, "t": None, **frame}))
