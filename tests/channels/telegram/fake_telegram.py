"""A fake Telegram Bot API server on loopback, speaking the real protocol, that the real
python-telegram-bot talks to: ``POST /bot{token}/{method}`` with a form, JSON or query body,
answered ``{"ok": true, "result": …}`` or ``{"ok": false, "error_code": …, "description": …}``
(with ``parameters.retry_after`` for a flood limit). The token in the path is checked (401
``Unauthorized`` for any other). ``getUpdates`` long-polls: it answers at once when an update is
waiting, else when one arrives, else after its ``timeout``; an ``offset`` confirms (forgets)
the updates before it.

The world: a private chat with ``ada`` (``private``), a plain group (``group``) and a forum
supergroup (``forum``). Tests act as Telegram's people (``user_says``, ``inject``), as Telegram
itself (``rotate_token``, ``fail_next``, ``drop_next``, ``delete_topic``) and read what the bot
did (``state``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, Self

from aiohttp import web

from tests.channels.telegram.fake_state import JSON, Call, Failure, FakeChat, FakeState

HANG_GUARD = 30  # seconds: a wait that never ends is a failure, not a hung suite
STRINGS = {"text", "name", "description"}  # fields whose value is text even when it looks like JSON
MAX_TEXT = 4096


class BotApiError(Exception):
    def __init__(self, status: int, description: str) -> None:
        super().__init__(description)
        self.status, self.description = status, description


class FakeTelegram:
    def __init__(self, token: str = "1001:fake-bot-token") -> None:
        self.state = FakeState()
        self.token = token  # the newest valid token
        self.changed = asyncio.Condition()
        self.private = self.state.add_chat(self.state.user("ada").id, "private", "ada")
        self.group = self.state.add_chat(-2001, "group", "team")
        self.forum = self.state.add_chat(-1003001, "supergroup", "projects", forum=True)
        self.url = ""
        self._polls_ended = 0  # each time, the long polls then waiting answer at once
        self._runner: web.AppRunner | None = None
        self._methods: dict[str, Callable[[JSON], Any]] = {
            "getMe": lambda body: {**self.state.bot.json(), "can_join_groups": True},
            "getChat": self._get_chat,
            "sendMessage": self._send_message,
            "createForumTopic": self._create_forum_topic,
        }

    async def start(self) -> None:
        app = web.Application()
        app.add_routes([web.route("*", "/bot{token}/{method}", self._handle)])
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"

    async def stop(self) -> None:
        await self._end_polls()  # a waiting long poll would hold the server's cleanup
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # Telegram's people

    async def user_says(
        self,
        chat: FakeChat,
        name: str,
        text: str | None,
        *,
        thread_id: int | None = None,
        reply_to: int | None = None,
        is_bot: bool = False,
        **extra: Any,
    ) -> int:
        """``name`` says ``text`` in ``chat`` (a bot, if ``is_bot``; ``extra``: service fields);
        the message's id, given to the bot as an update."""
        author = self.state.bot if name == "parley_bot" else self.state.user(name, is_bot=is_bot)
        message = self.state.add_message(
            chat, author, text, thread_id=thread_id, reply_to=reply_to, extra=extra
        )
        await self.inject({"message": message.json()})
        return message.message_id

    async def inject(self, update: JSON) -> int:
        """Give the bot an update as it is (any kind, any shape: forged ones too)."""
        number = next(self.state.next_update)
        self.state.updates.append({"update_id": number, **update})
        await self._notify()
        return number

    def add_topic(self, name: str) -> int:
        """A person made a forum topic: its id."""
        return self.state.add_topic(self.forum, self.state.user("ada"), name)

    def delete_topic(self, topic_id: int) -> None:
        """Gone without a word to the bot (Telegram tells bots of no deletion)."""
        del self.forum.topics[topic_id]

    # Telegram itself

    async def rotate_token(self, new_token: str = "1001:rotated-token") -> str:
        """A new token (BotFather's /revoke): the old one is refused from now on, and a long poll
        waiting with it is answered (with nothing) at once."""
        self.token = new_token
        await self._end_polls()
        return new_token

    async def _end_polls(self) -> None:
        self._polls_ended += 1
        await self._notify()

    def fail_next(
        self,
        method: str,
        status: int,
        description: str = "planned failure",
        *,
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        failure = Failure(status, description, retry_after)
        self.state.failures[method].extend([failure] * times)

    def drop_next(self, method: str, *, after: bool = False, times: int = 1) -> None:
        """Cut the next calls' connections unanswered (``after``: once the deed is done)."""
        self.state.failures[method].extend([Failure(0, "", after=after)] * times)

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        """Wait until the fake's state satisfies ``condition`` (checked after every change)."""
        async with asyncio.timeout(HANG_GUARD), self.changed:
            await self.changed.wait_for(condition)

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    # The Bot API

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method, token = request.match_info["method"], request.match_info["token"]
        call = Call(method, token, await _body(request))
        self.state.calls.append(call)
        await self._notify()  # a call asked is news: a long poll answers only when it ends
        try:
            response = await self._answer(request, call)
        finally:
            await self._notify()
        call.status = response.status
        await self._notify()
        return response

    async def _answer(self, request: web.Request, call: Call) -> web.Response:
        if call.token != self.token:
            return _error(401, "Unauthorized")
        failure = self.state.take_failure(call.method)
        if failure is not None and failure.status == 200:  # planned to pass: the ones after fail
            failure = None
        if failure is not None and failure.status:
            return _error(failure.status, failure.description, failure.retry_after)
        if failure is not None and not failure.after:
            _cut(request)
        try:
            if call.method == "getUpdates":
                result = await self._get_updates(call.body)
            elif call.method in self._methods:
                result = self._methods[call.method](call.body)
            else:
                raise BotApiError(404, "Not Found")
        except BotApiError as exc:
            return _error(exc.status, exc.description)
        if failure is not None:  # done, and the answer lost
            _cut(request)
        return web.json_response({"ok": True, "result": result})

    async def _get_updates(self, body: JSON) -> list[JSON]:
        offset = body.get("offset")
        if isinstance(offset, int):
            self.state.updates = [u for u in self.state.updates if u["update_id"] >= offset]
        timeout, ended = body.get("timeout") or 0, self._polls_ended
        async with self.changed:
            try:
                async with asyncio.timeout(float(timeout)):
                    await self.changed.wait_for(
                        lambda: bool(self.state.updates) or self._polls_ended > ended
                    )
            except TimeoutError:
                pass
        return list(self.state.updates)

    def _chat(self, body: JSON) -> FakeChat:
        chat = self.state.chats.get(body.get("chat_id"))  # type: ignore[arg-type]
        if chat is None:
            raise BotApiError(400, "Bad Request: chat not found")
        return chat

    def _get_chat(self, body: JSON) -> JSON:
        gifts = dict.fromkeys(
            ("unlimited_gifts", "limited_gifts", "unique_gifts", "premium_subscription"), False
        )
        return {
            **self._chat(body).json(),
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": gifts,
        }

    def _send_message(self, body: JSON) -> JSON:
        chat = self._chat(body)
        text, thread = body.get("text"), body.get("message_thread_id")
        if not isinstance(text, str) or not text.strip():
            raise BotApiError(400, "Bad Request: message text is empty")
        if len(text.encode("utf-16-le")) // 2 > MAX_TEXT:
            raise BotApiError(400, "Bad Request: message is too long")
        if thread is not None and thread not in chat.topics:
            raise BotApiError(400, "Bad Request: message thread not found")
        reply = body.get("reply_parameters") or {}
        reply_to = reply.get("message_id") if isinstance(reply, dict) else None
        if reply_to is not None and self.state.message(chat.id, reply_to) is None:
            raise BotApiError(400, "Bad Request: message to be replied not found")
        sent = self.state.add_message(
            chat, self.state.bot, text, thread_id=thread, reply_to=reply_to
        )
        return sent.json()

    def _create_forum_topic(self, body: JSON) -> JSON:
        chat, name = self._chat(body), body.get("name")
        if not chat.is_forum:
            raise BotApiError(400, "Bad Request: the chat is not a forum")
        if not isinstance(name, str) or not 1 <= len(name) <= 128:
            raise BotApiError(400, "Bad Request: TOPIC_NAME_INVALID")
        topic = self.state.add_topic(chat, self.state.bot, name)
        return {"message_thread_id": topic, "name": name, "icon_color": 7322096}


async def _body(request: web.Request) -> JSON:
    """The call's parameters, however the client sent them (each form value JSON-decoded, as
    the Bot API reads them, text fields excepted)."""
    raw: dict[str, Any] = dict(request.query)
    if request.content_type == "application/json":
        raw |= await request.json()
        return raw
    if request.can_read_body:
        raw |= {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
    return {
        k: (v if k in STRINGS or not isinstance(v, str) else _decoded(v)) for k, v in raw.items()
    }


def _cut(request: web.Request) -> None:
    if request.transport is not None:
        request.transport.abort()
    raise asyncio.CancelledError


def _decoded(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _error(status: int, description: str, retry_after: int | None = None) -> web.Response:
    body: JSON = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return web.json_response(body, status=status)
