"""A local fake Slack (the Web API methods Parley calls, and Socket Mode) that slack_sdk really
speaks to: an aiohttp server on 127.0.0.1 at a free port with one workspace, one app (its bot
user and two tokens), a ``#general`` channel and a few people.

What it speaks
  - Web API: ``GET``/``POST {url}/api/METHOD`` with form, query or JSON parameters and the
    token as ``Authorization: Bearer`` (or a ``token`` parameter); answers are Slack's
    ``{"ok": true, …}`` / ``{"ok": false, "error": "…"}`` with status 200. Methods:
    ``auth.test``, ``apps.connections.open`` (the app-level token only: the bot token gets
    ``not_allowed_token_type``), ``chat.postMessage`` (``thread_ts``, ``username``,
    ``metadata``; an unknown channel ``channel_not_found``, an archived one ``is_archived``, an
    unknown thread ``thread_not_found``), ``chat.postEphemeral`` (kept in ``ephemerals``, never
    pushed as an event, as Slack does), ``conversations.history`` (top-level messages, newest
    first) and ``conversations.replies`` (a thread, oldest first, paged by ``cursor``), both
    with metadata only under ``include_all_metadata``. Anything else: ``unknown_method``.
  - Tokens: an unknown or old token → ``invalid_auth``. ``rotate_tokens`` makes new ones and
    the old invalid at once; ``secret`` is always the newest, as Parley stores it.
  - Socket Mode: ``apps.connections.open`` answers ``ws://127.0.0.1:PORT/link/?ticket=…`` (a
    ticket is good once); the socket sends ``hello``, then the envelopes the test injects
    (``user_says``, ``run_command``, ``push``), and records each acknowledgement with its
    payload in ``acks``. The bot's own posts come back to it as ``message`` events with its
    ``bot_id``, as Slack sends them. ``send_disconnect`` asks for a new connection;
    ``drop_sockets`` closes them.
  - Failures: ``fail_next(method, error=…, status=…, retry_after=…)`` answers the next call
    with Slack's error (429 with ``Retry-After`` for ``ratelimited``, a 5xx page for 500);
    ``drop_next(method, taken=…)`` cuts the connection unanswered, after storing the post when
    ``taken`` (Slack took it; the answer was lost).

What it does not: Events API over HTTP, interactive components, files, reactions, edits and
deletions by the bot, users.info, pagination of the history, real rate-limit tiers.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import WSMsgType, web

JSON = dict[str, Any]
HANG_GUARD = 30  # seconds: a wait that never ends is a failure, not a hung suite
TEAM, APP_ID = "T0PARLEY", "A0PARLEY"
BOT_USER, BOT_ID = "U0PARLEYBOT", "B0PARLEY"
GENERAL = "C0GENERAL"
PEOPLE = {"ada": "U0ADA", "bea": "U0BEA", "stranger": "U0STRANGER"}
APP_METHODS = {"apps.connections.open"}


@dataclass
class Message:
    channel: str
    ts: str
    text: str
    user: str | None
    thread_ts: str | None = None
    bot_id: str | None = None
    username: str | None = None
    metadata: JSON | None = None
    subtype: str | None = None

    @property
    def top_level(self) -> bool:
        return self.thread_ts is None or self.thread_ts == self.ts

    def shown(self, with_metadata: bool) -> JSON:
        shape: JSON = {"type": "message", "ts": self.ts, "text": self.text}
        for name in ("user", "thread_ts", "bot_id", "username", "subtype"):
            if getattr(self, name) is not None:
                shape[name] = getattr(self, name)
        if with_metadata and self.metadata is not None:
            shape["metadata"] = self.metadata
        return shape


@dataclass
class Call:
    method: str
    token: str | None
    params: JSON
    status: int = 0
    error: str | None = None


@dataclass
class Failure:
    method: str
    error: str | None  # None: cut the connection
    status: int = 200
    retry_after: float | None = None
    taken: bool = False  # a cut after the call did its work


@dataclass
class FakeSlack:
    url: str = ""
    bot_token: str = "xoxb-fake-1"
    app_token: str = "xapp-fake-1"
    channels: dict[str, JSON] = field(default_factory=lambda: {GENERAL: {"archived": False}})
    messages: dict[str, list[Message]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    acks: dict[str, JSON | None] = field(default_factory=dict)
    ephemerals: list[Message] = field(default_factory=list)  # user: who alone sees it
    connections: int = 0  # sockets opened so far
    sockets: set[web.WebSocketResponse] = field(default_factory=set)
    failures: list[Failure] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _tickets: set[str] = field(default_factory=set)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _runner: web.AppRunner | None = None

    # -- running --------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.add_routes([web.route("*", "/api/{method}", self._api),
                        web.get("/link/", self._link)])  # fmt: skip
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        for socket in list(self.sockets):
            await socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/"

    @property
    def secret(self) -> str:
        return f"{self.bot_token} {self.app_token}"

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        """Wait until the fake's state satisfies ``condition`` (checked after every change)."""
        async with asyncio.timeout(HANG_GUARD), self.changed:
            await self.changed.wait_for(condition)

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    # -- the test as Slack and as its people ---------------------------------------------

    def rotate_tokens(self) -> str:
        n = secrets.token_hex(4)
        self.bot_token, self.app_token = f"xoxb-fake-{n}", f"xapp-fake-{n}"
        return self.secret

    def fail_next(self, method: str, error: str = "ratelimited", *, status: int = 200,
                  retry_after: float | None = None) -> None:  # fmt: skip
        if error == "ratelimited":
            status = 429
        self.failures.append(Failure(method, error, status, retry_after))

    def drop_next(self, method: str, *, taken: bool = False, times: int = 1) -> None:
        self.failures.extend(Failure(method, None, 0, None, taken) for _ in range(times))

    def next_ts(self) -> str:
        n = next(self._counter)
        return f"{1_700_000_000 + n}.{n:06d}"

    async def user_says(self, who: str, text: str, channel: str = GENERAL,
                        thread_ts: str | None = None, **event: Any) -> str:  # fmt: skip
        """``who`` (a name of ``PEOPLE``, or a user id) writes; the event pushed; its ts."""
        user = PEOPLE.get(who, who)
        ts = self.next_ts()
        said = Message(channel, ts, text, user, thread_ts, subtype=event.get("subtype"),
                       bot_id=event.get("bot_id"))  # fmt: skip
        self.messages.setdefault(channel, []).append(said)
        shape = {**said.shown(False), "channel": channel, "channel_type": "channel", **event}
        await self.push_event(shape)
        return ts

    async def push_event(self, event: JSON, team: str = TEAM) -> str:
        payload = {"token": "legacy", "team_id": team, "api_app_id": APP_ID, "event": event,
                   "type": "event_callback", "event_id": f"Ev{next(self._counter)}"}  # fmt: skip
        return await self.push("events_api", payload)

    async def run_command(self, who: str, command: str, text: str = "",
                          channel: str = GENERAL) -> str:  # fmt: skip
        payload = {"command": command, "text": text, "user_id": PEOPLE.get(who, who),
                   "channel_id": channel, "team_id": TEAM, "api_app_id": APP_ID,
                   "trigger_id": "t", "response_url": f"{self.url}/respond"}  # fmt: skip
        return await self.push("slash_commands", payload, accepts_response_payload=True)

    async def push(self, kind: str, payload: JSON, *, accepts_response_payload: bool = False
                   ) -> str:  # fmt: skip
        envelope_id = f"env-{next(self._counter)}"
        envelope = {"envelope_id": envelope_id, "type": kind, "payload": payload,
                    "accepts_response_payload": accepts_response_payload, "retry_attempt": 0,
                    "retry_reason": ""}  # fmt: skip
        await self._send_all(envelope)
        return envelope_id

    async def send_raw(self, frame: str) -> None:
        for socket in list(self.sockets):
            await socket.send_str(frame)

    async def send_disconnect(self) -> None:
        await self._send_all({"type": "disconnect", "reason": "refresh_requested"})

    async def drop_sockets(self) -> None:
        for socket in list(self.sockets):
            await socket.close()

    def delete_message(self, channel: str, ts: str) -> None:
        """A person deletes a message, and with it the thread under it."""
        self.messages[channel] = [m for m in self.messages.get(channel, [])
                                  if m.ts != ts and m.thread_ts != ts]  # fmt: skip

    # -- reading what the bot did ---------------------------------------------------------

    def posts(self, channel: str = GENERAL, thread_ts: str | None = None) -> list[Message]:
        """The bot's messages in the channel (top level) or in a thread."""
        return [m for m in self.messages.get(channel, []) if m.bot_id == BOT_ID
                and (m.top_level if thread_ts is None else m.thread_ts == thread_ts
                     and m.ts != thread_ts)]  # fmt: skip

    def texts(self, channel: str = GENERAL, thread_ts: str | None = None) -> list[str]:
        return [m.text for m in self.posts(channel, thread_ts)]

    def reopened(self, since: int) -> bool:
        """A socket is open, opened after ``since`` sockets had been."""
        return self.connections > since and bool(self.sockets)

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    # -- the Web API ----------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        params = await _params(request)
        header = request.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ") if header else params.pop("token", None)
        call = Call(method, token, params)
        self.calls.append(call)
        try:
            return await self._answer(request, call)
        finally:
            await self._notify()

    async def _answer(self, request: web.Request, call: Call) -> web.StreamResponse:
        wanted = self.app_token if call.method in APP_METHODS else self.bot_token
        other = self.bot_token if call.method in APP_METHODS else self.app_token
        if call.token != wanted:
            return self._error(call, "not_allowed_token_type" if call.token == other
                               else "invalid_auth")  # fmt: skip
        failure = next((f for f in self.failures if f.method == call.method), None)
        if failure is not None:
            self.failures.remove(failure)
            if failure.error is None:
                if failure.taken:
                    self._do(call)
                if request.transport is not None:
                    request.transport.abort()
                raise asyncio.CancelledError
            return self._error(call, failure.error, failure.status, failure.retry_after)
        try:
            data = self._do(call)
        except SlackError as exc:
            return self._error(call, exc.error)
        call.status = 200
        for event in data.pop("_events", []):
            await self.push_event(event)
        return web.json_response({"ok": True, **data})

    def _error(self, call: Call, error: str, status: int = 200,
               retry_after: float | None = None) -> web.Response:  # fmt: skip
        call.status, call.error = status, error
        if status >= 500:
            return web.Response(status=status, text="<html>upstream connect error</html>",
                                content_type="text/html")  # fmt: skip
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        return web.json_response({"ok": False, "error": error}, status=status, headers=headers)

    def _do(self, call: Call) -> JSON:
        handler = {
            "auth.test": self._auth_test,
            "apps.connections.open": self._connections_open,
            "chat.postMessage": self._post_message,
            "chat.postEphemeral": self._post_ephemeral,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
        }.get(call.method)
        if handler is None:
            raise SlackError("unknown_method")
        return handler(call.params)

    def _auth_test(self, params: JSON) -> JSON:
        return {"url": "https://parley-test.slack.com/", "team": "Parley Test", "user": "parley",
                "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID}  # fmt: skip

    def _connections_open(self, params: JSON) -> JSON:
        ticket = secrets.token_hex(8)
        self._tickets.add(ticket)
        return {"url": f"{self.url.replace('http', 'ws', 1)}/link/?ticket={ticket}"}

    def _channel(self, params: JSON) -> str:
        channel = str(params.get("channel") or "")
        if channel not in self.channels:
            raise SlackError("channel_not_found")
        return channel

    def _post_message(self, params: JSON) -> JSON:
        channel = self._channel(params)
        if self.channels[channel]["archived"]:
            raise SlackError("is_archived")
        text, thread_ts = params.get("text"), params.get("thread_ts")
        if not isinstance(text, str) or not text:
            raise SlackError("no_text")
        if thread_ts is not None and not self._parent(channel, str(thread_ts)):
            raise SlackError("thread_not_found")
        metadata = params.get("metadata")
        if isinstance(metadata, str):
            metadata = json.loads(metadata)
        username = params.get("username")
        posted = Message(channel, self.next_ts(), text, BOT_USER,
                         None if thread_ts is None else str(thread_ts), BOT_ID, username,
                         metadata, "bot_message" if username else None)  # fmt: skip
        self.messages.setdefault(channel, []).append(posted)
        echo = {**posted.shown(False), "channel": channel, "channel_type": "channel"}
        return {"channel": channel, "ts": posted.ts, "message": posted.shown(True),
                "_events": [echo]}  # fmt: skip

    def _post_ephemeral(self, params: JSON) -> JSON:
        channel = self._channel(params)
        text, user, thread_ts = params.get("text"), params.get("user"), params.get("thread_ts")
        if not isinstance(text, str) or not text:
            raise SlackError("no_text")
        if user not in PEOPLE.values():
            raise SlackError("user_not_found")
        shown = Message(channel, self.next_ts(), text, str(user),
                        None if thread_ts is None else str(thread_ts), BOT_ID)  # fmt: skip
        self.ephemerals.append(shown)
        return {"message_ts": shown.ts}

    def _parent(self, channel: str, ts: str) -> Message | None:
        return next((m for m in self.messages.get(channel, []) if m.ts == ts and m.top_level),
                    None)  # fmt: skip

    def _history(self, params: JSON) -> JSON:
        channel = self._channel(params)
        limit = int(params.get("limit") or 100)
        tops = [m for m in reversed(self.messages.get(channel, [])) if m.top_level]
        shown = [m.shown(_true(params.get("include_all_metadata"))) for m in tops[:limit]]
        return {"messages": shown, "has_more": len(tops) > limit}

    def _replies(self, params: JSON) -> JSON:
        channel = self._channel(params)
        parent = self._parent(channel, str(params.get("ts")))
        if parent is None:
            raise SlackError("thread_not_found")
        thread = [parent, *(m for m in self.messages[channel]
                            if m.thread_ts == parent.ts and m.ts != parent.ts)]  # fmt: skip
        start, limit = int(params.get("cursor") or 0), int(params.get("limit") or 100)
        page = thread[start : start + limit]
        more = start + limit < len(thread)
        with_metadata = _true(params.get("include_all_metadata"))
        cursor = str(start + limit) if more else ""
        return {"messages": [m.shown(with_metadata) for m in page], "has_more": more,
                "response_metadata": {"next_cursor": cursor}}  # fmt: skip

    # -- Socket Mode ----------------------------------------------------------------------

    async def _link(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            return web.Response(status=401, text="invalid ticket")
        self._tickets.discard(ticket)
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.sockets.add(socket)
        self.connections += 1
        await socket.send_json({"type": "hello", "num_connections": len(self.sockets),
                                "connection_info": {"app_id": APP_ID}})  # fmt: skip
        await self._notify()
        try:
            async for frame in socket:
                if frame.type == WSMsgType.TEXT:
                    self._acked(json.loads(frame.data))
                    await self._notify()
        finally:
            self.sockets.discard(socket)
            await self._notify()
        return socket

    def _acked(self, frame: Any) -> None:
        if isinstance(frame, dict) and isinstance(frame.get("envelope_id"), str):
            self.acks[frame["envelope_id"]] = frame.get("payload")

    async def _send_all(self, frame: JSON) -> None:
        for socket in list(self.sockets):
            if not socket.closed:
                await socket.send_json(frame)


class SlackError(Exception):
    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


async def _params(request: web.Request) -> JSON:
    params: JSON = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            body = await request.json()
            params.update(body if isinstance(body, dict) else {})
        else:
            params.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
    return params


def _true(value: object) -> bool:
    return value in (True, 1, "1", "true", "True")
