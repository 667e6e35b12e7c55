"""A fake Matrix homeserver on loopback, speaking the client-server API that mautrix calls, so
that Parley's real Matrix channel (and the real library) can be tested against it.

What it speaks
  - ``GET /_matrix/client/versions``, ``GET /_matrix/client/v3/account/whoami``.
  - ``GET /_matrix/client/v3/sync`` with ``since`` and ``timeout``: without ``since``, every
    joined room's history and the pending invites; with it, what happened since, waiting up to
    ``timeout`` ms for news (a long poll). Positions are numbers, as text.
  - ``PUT /_matrix/client/v3/rooms/{room}/send/{type}/{txnId}``: a transaction id seen before
    for the same access token answers the event made then and stores nothing; a room the bot
    is not in answers 403 ``M_FORBIDDEN``, an unknown room or a thread whose root was redacted
    404 ``M_NOT_FOUND``.
  - ``POST /_matrix/client/v3/rooms/{room}/join`` and ``/join/{room}``: only when invited.
  - Every call needs the bearer token (401 ``M_UNKNOWN_TOKEN`` otherwise).

What a test does
  People's messages (``user_says``), edits, redactions, invites go into rooms as events seen by
  the next sync; ``forge`` puts a raw event in the next sync as a hostile server would;
  ``fail_next(route, status)`` fails the next call (429 with ``retry_after_ms``, 401, 403, 404,
  500); ``drop_next(route)`` does the call then cuts its connection unanswered (every call while
  the route is in ``cutting``);
  ``rotate_token`` makes a new token (the old one refused); ``kick`` removes the bot from a
  room. ``calls`` records each call (route, token, status, txn id); ``wait_until`` waits for a
  change."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

SERVER = "fake.test"
BOT = f"@parley:{SERVER}"
HANG_GUARD = 10.0  # seconds: a test that waits longer is broken, not slow
ERRCODES = {401: "M_UNKNOWN_TOKEN", 403: "M_FORBIDDEN", 404: "M_NOT_FOUND",
            429: "M_LIMIT_EXCEEDED", 500: "M_UNKNOWN"}  # fmt: skip
JSON = dict[str, Any]


@dataclass
class Room:
    room_id: str
    members: set[str]
    events: list[JSON] = field(default_factory=list)
    redacted: set[str] = field(default_factory=set)


@dataclass
class Call:
    method: str
    route: str
    token: str | None
    status: int = 0
    txn: str | None = None
    since: str | None = None  # a sync's
    filter: str | None = None  # a sync's


@dataclass
class Failure:
    route: str
    status: int  # 0: do it, then cut the connection unanswered
    retry_after_ms: int | None = None


@dataclass
class Entry:
    """One change a sync reports: an event in a room, an invite, or a forged raw part."""

    position: int
    room_id: str
    section: str  # "join" (a timeline event), "invite", or a forged section
    event: JSON


class FakeMatrix:
    def __init__(self) -> None:
        self.token = "fake-access-token"
        self.valid_tokens = {self.token}
        self.rooms: dict[str, Room] = {}
        self.entries: list[Entry] = []
        self.invited: dict[str, str] = {}  # room → who invited the bot
        self.calls: list[Call] = []
        self.failures: list[Failure] = []
        self.cutting: set[str] = set()  # routes whose every call is done, then cut
        self.txns: dict[tuple[str, str, str], str] = {}  # (token, room, txn) → event id
        self.changed = asyncio.Condition()
        self._counter = 0
        self._runner: web.AppRunner | None = None
        self.url = ""
        self.room = self.new_room("general")

    # Running

    async def __aenter__(self) -> FakeMatrix:
        app = web.Application()
        client = "/_matrix/client"
        app.router.add_get(f"{client}/versions", self._versions)
        app.router.add_get(f"{client}/v3/account/whoami", self._whoami)
        app.router.add_get(f"{client}/v3/sync", self._sync)
        app.router.add_put(f"{client}/v3/rooms/{{room}}/send/{{type}}/{{txn}}", self._send)
        app.router.add_post(f"{client}/v3/rooms/{{room}}/join", self._join)
        app.router.add_post(f"{client}/v3/join/{{room}}", self._join)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        site = web.SockSite(self._runner, sock)
        await site.start()
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # What a test does

    def user(self, name: str) -> str:
        return f"@{name}:{SERVER}"

    def new_room(self, name: str, *, bot_joined: bool = True) -> Room:
        found = Room(f"!{name}:{SERVER}", {self.user("ada")} | ({BOT} if bot_joined else set()))
        self.rooms[found.room_id] = found
        return found

    async def user_says(
        self, room_id: str, name: str, text: str, *, thread: str | None = None,
        msgtype: str = "m.text", **content: Any,
    ) -> str:  # fmt: skip
        """``name`` says ``text`` (in the thread whose root is ``thread``); the event's id."""
        made: JSON = {"msgtype": msgtype, "body": text, **content}
        if thread is not None:
            made["m.relates_to"] = {"rel_type": "m.thread", "event_id": thread,
                                    "is_falling_back": True,
                                    "m.in_reply_to": {"event_id": thread}}  # fmt: skip
        return await self.event(room_id, self.user(name), "m.room.message", made)

    async def user_edits(self, room_id: str, name: str, event_id: str, text: str) -> str:
        made = {"msgtype": "m.text", "body": f"* {text}",
                "m.new_content": {"msgtype": "m.text", "body": text},
                "m.relates_to": {"rel_type": "m.replace", "event_id": event_id}}  # fmt: skip
        return await self.event(room_id, self.user(name), "m.room.message", made)

    async def redact(self, room_id: str, name: str, event_id: str) -> str:
        self.rooms[room_id].redacted.add(event_id)
        return await self.event(room_id, self.user(name), "m.room.redaction", {},
                                redacts=event_id)  # fmt: skip

    async def event(self, room_id: str, sender: str, kind: str, content: JSON, **extra: Any) -> str:
        self._counter += 1
        event_id = f"${self._counter}-{room_id.split(':')[0][1:]}"
        made = {"type": kind, "sender": sender, "event_id": event_id, "content": content,
                "origin_server_ts": 1_700_000_000_000 + self._counter, "unsigned": {},
                **extra}  # fmt: skip
        self.rooms[room_id].events.append(made)
        await self._add(Entry(0, room_id, "join", made))
        return event_id

    async def invite(self, room_id: str, name: str) -> None:
        """``name`` invites the bot to a room (made if new)."""
        if room_id not in self.rooms:
            self.rooms[room_id] = Room(room_id, {self.user(name)})
        self.invited[room_id] = self.user(name)
        member = {"type": "m.room.member", "sender": self.user(name), "state_key": BOT,
                  "content": {"membership": "invite"}}  # fmt: skip
        await self._add(Entry(0, room_id, "invite", member))

    async def forge(self, room_id: str, event: JSON, section: str = "join") -> None:
        """``event`` in the next sync, under ``rooms.{section}.{room_id}``, whatever it is."""
        await self._add(Entry(0, room_id, f"forged:{section}", event))

    def kick(self, room_id: str) -> None:
        self.rooms[room_id].members.discard(BOT)

    def fail_next(self, route: str, status: int, *, retry_after_ms: int | None = None) -> None:
        self.failures.append(Failure(route, status, retry_after_ms))

    def drop_next(self, route: str, *, times: int = 1) -> None:
        self.failures.extend(Failure(route, 0) for _ in range(times))

    def rotate_token(self, new_token: str = "rotated-access-token") -> str:
        self.valid_tokens = {new_token}
        self.token = new_token
        return new_token

    def sent(self, room_id: str) -> list[JSON]:
        """The bot's events in the room, in order."""
        return [e for e in self.rooms[room_id].events if e["sender"] == BOT]

    def texts(self, room_id: str, thread: str | None = None) -> list[str]:
        """The bodies of the bot's messages in the room (or in one thread of it only)."""
        return [str(e["content"]["body"]) for e in self.sent(room_id)
                if _thread_of(e) == thread]  # fmt: skip

    def calls_to(self, route: str) -> list[Call]:
        return [c for c in self.calls if c.route == route]

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        """Wait until the fake's state satisfies ``condition`` (checked after every change)."""
        async with asyncio.timeout(HANG_GUARD), self.changed:
            await self.changed.wait_for(condition)

    async def _add(self, entry: Entry) -> None:
        entry.position = len(self.entries) + 1
        self.entries.append(entry)
        await self._notify()

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    # The API

    async def _answer(
        self, request: web.Request, route: str, txn: str | None = None
    ) -> tuple[Call, web.Response | None]:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or None
        call = Call(
            request.method,
            route,
            token,
            txn=txn,
            since=request.query.get("since"),
            filter=request.query.get("filter"),
        )
        self.calls.append(call)
        await self._notify()  # a call asked is news: a long-polling sync answers only when it ends
        if route != "versions" and token not in self.valid_tokens:
            return call, _error(401, "Unknown access token")
        failure = next((f for f in self.failures if f.route == route), None)
        if failure is not None and failure.status != 0:
            self.failures.remove(failure)
            return call, _error(failure.status, "planned failure", failure.retry_after_ms)
        return call, None

    async def _done(self, call: Call, response: web.Response) -> web.Response:
        call.status = response.status
        await self._notify()
        return response

    def _cut_here(self, route: str) -> bool:
        if route in self.cutting:
            return True
        failure = next((f for f in self.failures if f.route == route and f.status == 0), None)
        if failure is not None:
            self.failures.remove(failure)
        return failure is not None

    async def _versions(self, request: web.Request) -> web.Response:
        call, refused = await self._answer(request, "versions")
        return await self._done(call, refused or _ok({"versions": ["v1.11"]}))

    async def _whoami(self, request: web.Request) -> web.Response:
        call, refused = await self._answer(request, "whoami")
        return await self._done(call, refused or _ok({"user_id": BOT, "device_id": "FAKEDEV"}))

    async def _sync(self, request: web.Request) -> web.Response:
        call, refused = await self._answer(request, "sync")
        if refused is not None:
            return await self._done(call, refused)
        since = call.since
        timeout = int(request.query.get("timeout", "0")) / 1000
        if since is None:
            return await self._done(call, _ok(self._initial()))
        position = int(since)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout), self.changed:
                await self.changed.wait_for(lambda: len(self.entries) > position)
        return await self._done(call, _ok(self._since(position)))

    def _initial(self) -> JSON:
        joined = {r.room_id: {"timeline": {"events": list(r.events), "limited": False}}
                  for r in self.rooms.values() if BOT in r.members}  # fmt: skip
        invites = {room: {"invite_state": {"events": [self._invite_event(room, by)]}}
                   for room, by in self.invited.items()
                   if BOT not in self.rooms[room].members}  # fmt: skip
        answer = {
            "next_batch": str(len(self.entries)),
            "rooms": {"join": joined, "invite": invites},
        }
        return answer

    def _since(self, position: int) -> JSON:
        rooms: dict[str, dict[str, JSON]] = {}
        for entry in self.entries[position:]:
            section = entry.section.removeprefix("forged:")
            if entry.section == "join" and BOT not in self.rooms[entry.room_id].members:
                continue
            place = rooms.setdefault(section, {}).setdefault(entry.room_id, {})
            if section == "invite":
                place.setdefault("invite_state", {"events": []})["events"].append(entry.event)
            else:
                place.setdefault("timeline", {"events": []})["events"].append(entry.event)
        return {"next_batch": str(len(self.entries)), "rooms": rooms}

    def _invite_event(self, room_id: str, by: str) -> JSON:
        return {"type": "m.room.member", "sender": by, "state_key": BOT,
                "content": {"membership": "invite"}}  # fmt: skip

    async def _send(self, request: web.Request) -> web.Response:
        room_id, txn = request.match_info["room"], request.match_info["txn"]
        call, refused = await self._answer(request, "send", txn)
        if refused is not None:
            return await self._done(call, refused)
        body = json.loads(await request.text() or "{}")
        kept = self.txns.get((str(call.token), room_id, txn))
        if kept is None:
            found = self.rooms.get(room_id)
            if found is None:
                return await self._done(call, _error(404, "Unknown room"))
            if BOT not in found.members:
                return await self._done(call, _error(403, "You are not in this room"))
            root = _relation(body).get("event_id")
            if _relation(body).get("rel_type") == "m.thread" and root in found.redacted:
                return await self._done(call, _error(404, "The thread's root is gone"))
            kept = await self.event(room_id, BOT, request.match_info["type"], body)
            self.txns[(str(call.token), room_id, txn)] = kept
        if self._cut_here("send"):
            call.status = 0
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError
        return await self._done(call, _ok({"event_id": kept}))

    async def _join(self, request: web.Request) -> web.Response:
        room_id = request.match_info["room"]
        call, refused = await self._answer(request, "join")
        if refused is not None:
            return await self._done(call, refused)
        if room_id not in self.invited or room_id not in self.rooms:
            return await self._done(call, _error(403, "You are not invited to this room"))
        self.rooms[room_id].members.add(BOT)
        self.invited.pop(room_id)
        return await self._done(call, _ok({"room_id": room_id}))


def _relation(content: JSON) -> JSON:
    found = content.get("m.relates_to")
    return found if isinstance(found, dict) else {}


def _thread_of(event: JSON) -> str | None:
    relation = _relation(event.get("content") or {})
    return str(relation["event_id"]) if relation.get("rel_type") == "m.thread" else None


def _ok(data: JSON) -> web.Response:
    return web.json_response(data)


def _error(status: int, message: str, retry_after_ms: int | None = None) -> web.Response:
    body: JSON = {"errcode": ERRCODES.get(status, "M_UNKNOWN"), "error": message}
    if retry_after_ms is not None:
        body["retry_after_ms"] = retry_after_ms
    return web.json_response(body, status=status)
