"""The fake Telegram's world: users (people and the bot), chats (private, groups, forum
supergroups with topics), the messages said in them, the updates waiting for the bot, every
Bot API call the bot made, and failures planned for its next calls."""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]
DATE = 1_780_000_000  # every message's date: the fake has no clock


@dataclass(frozen=True)
class FakeUser:
    id: int
    name: str
    is_bot: bool = False

    def json(self) -> JSON:
        return {
            "id": self.id,
            "is_bot": self.is_bot,
            "first_name": self.name,
            "username": self.name,
        }


@dataclass
class FakeChat:
    id: int
    type: str  # private, group, supergroup
    title: str
    is_forum: bool = False
    topics: dict[int, str] = field(default_factory=dict)  # message_thread_id → name
    next_message: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def json(self) -> JSON:
        named = {"first_name": self.title} if self.type == "private" else {"title": self.title}
        return {
            "id": self.id,
            "type": self.type,
            **named,
            **({"is_forum": True} if self.is_forum else {}),
        }


@dataclass
class FakeMessage:
    message_id: int
    chat: FakeChat
    author: FakeUser
    text: str | None
    thread_id: int | None = None  # the forum topic it is in
    reply_to: FakeMessage | None = None
    extra: JSON = field(default_factory=dict)  # service fields: new_chat_members, …

    def json(self, nested: bool = True) -> JSON:
        data: JSON = {
            "message_id": self.message_id,
            "date": DATE,
            "chat": self.chat.json(),
            "from": self.author.json(),
            **self.extra,
        }
        if self.text is not None:
            data["text"] = self.text
        if self.thread_id is not None:
            data |= {"message_thread_id": self.thread_id, "is_topic_message": True}
        if self.reply_to is not None and nested:
            data["reply_to_message"] = self.reply_to.json(nested=False)
        return data


@dataclass
class Call:
    method: str
    token: str
    body: JSON
    status: int = 0  # 0: cut before an answer


@dataclass(frozen=True)
class Failure:
    status: int  # 0: cut the connection without an answer
    description: str
    retry_after: int | None = None
    after: bool = False  # cut after doing it (the answer lost, the deed done)


class FakeState:
    def __init__(self) -> None:
        self._ids = itertools.count(1001)
        self.bot = FakeUser(next(self._ids), "parley_bot", is_bot=True)
        self.users: dict[str, FakeUser] = {}
        self.chats: dict[int, FakeChat] = {}
        self.messages: defaultdict[int, list[FakeMessage]] = defaultdict(list)
        self.updates: list[JSON] = []  # not yet confirmed by an offset
        self.next_update = itertools.count(1)
        self.calls: list[Call] = []
        self.failures: defaultdict[str, list[Failure]] = defaultdict(list)

    def user(self, name: str, *, is_bot: bool = False) -> FakeUser:
        if name not in self.users:
            self.users[name] = FakeUser(next(self._ids), name, is_bot)
        return self.users[name]

    def add_chat(self, chat_id: int, type_: str, title: str, *, forum: bool = False) -> FakeChat:
        chat = self.chats[chat_id] = FakeChat(chat_id, type_, title, is_forum=forum)
        return chat

    def add_message(
        self,
        chat: FakeChat,
        author: FakeUser,
        text: str | None,
        *,
        thread_id: int | None = None,
        reply_to: int | None = None,
        extra: JSON | None = None,
    ) -> FakeMessage:
        answered = None if reply_to is None else self.message(chat.id, reply_to)
        message = FakeMessage(
            next(chat.next_message), chat, author, text, thread_id, answered, extra or {}
        )
        self.messages[chat.id].append(message)
        return message

    def add_topic(self, chat: FakeChat, author: FakeUser, name: str) -> int:
        """A forum topic: its id, that of its first message (``forum_topic_created``), in it."""
        created = {"forum_topic_created": {"name": name, "icon_color": 7322096}}
        message = self.add_message(chat, author, None, extra=created)
        message.thread_id = message.message_id
        chat.topics[message.message_id] = name
        return message.message_id

    def message(self, chat_id: int, message_id: int) -> FakeMessage | None:
        found = [m for m in self.messages[chat_id] if m.message_id == message_id]
        return found[0] if found else None

    def texts(self, chat_id: int, thread_id: int | None = None) -> list[str]:
        return [m.text or "" for m in self.messages[chat_id] if m.thread_id == thread_id]

    def bot_said(self, chat_id: int) -> list[FakeMessage]:
        return [m for m in self.messages[chat_id] if m.author == self.bot]

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def take_failure(self, method: str) -> Failure | None:
        planned = self.failures.get(method)
        return planned.pop(0) if planned else None
