"""The Telegram adapter of one account, as the outbox uses it (``ChannelAdapter``): a post goes
as the bot, in the chat, in its forum topic (``message_thread_id``) or as a reply to its reply
chain's root (``reply_to_message_id``); text longer than Telegram's 4096 characters goes in
several messages, in order, each part with its own key.

Exactly once, as far as Telegram allows: the Bot API has no idempotency key and a bot cannot
read a chat's history, so there is nothing to ask before a retry. The adapter remembers, while
the server runs, each key (of each part) Telegram took and the message id it answered, and each
thread it made: an attempt repeated after a known success (a part of a long text sent before a
failure, a thread made before its binding failed to be recorded) posts nothing again and answers
the same id. What remains: Telegram took a message but its answer was lost (a cut connection, a
timeout), or Parley stopped between Telegram's answer and the outbox recording it: the retry
posts that message a second time.

Every send records the account's activity and touches the binding it went through; a bound
topic or chain Telegram no longer knows ("message thread not found") ends its binding; a flood
limit shows the account rate-limited until Telegram's ``retry_after`` and is waited out by the
outbox; a refused token shows it refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from telegram import Bot

from parley.channels.connected import AccountPhase
from parley.channels.hearing import posting, record_outbound
from parley.channels.model import ConversationRef, SessionBindingRecord
from parley.channels.telegram.failures import speaking_to_telegram
from parley.channels.telegram.manager import TelegramAccountManager
from parley.channels.telegram.refs import TELEGRAM, Place, conversation, place
from parley.clock import Clock
from parley.errors import Invalid, ParleyError, Unauthorized, Unavailable

MAX_MESSAGE = 4096  # UTF-16 code units of one Telegram message
MAX_TOPIC_NAME = 128


class TelegramAdapter:
    def __init__(self, manager: TelegramAccountManager, clock: Clock) -> None:
        self._manager, self._clock = manager, clock

    async def post(
        self, ref: ConversationRef, text: str, persona: str | None, idempotency_key: str
    ) -> str:
        where = place(ref)

        async def send(_: SessionBindingRecord | None) -> int:
            async with self._speaking():
                return await self._send(await self._manager.bot(), where, text, idempotency_key)

        return str(await posting(self._manager.store, self._clock, ref, send))

    async def create_thread(
        self, parent: ConversationRef, name: str, idempotency_key: str
    ) -> ConversationRef:
        where = place(parent)
        if where.is_thread:
            raise Invalid(f"{parent} is a thread: Telegram threads have no threads")
        made = self._manager.threads.get(idempotency_key)
        if made is None:
            async with self._speaking():
                made = await self._make_thread(
                    await self._manager.bot(), where, name, idempotency_key
                )
            self._manager.threads.put(idempotency_key, made)
        await record_outbound(self._manager.store, self._clock, parent, None)
        return made

    async def _make_thread(self, bot: Bot, where: Place, name: str, key: str) -> ConversationRef:
        """A forum topic in a forum; elsewhere a reply chain hanging from an intro."""
        account = self._manager.account_id
        if await self._is_forum(bot, where.chat_id):
            topic = await bot.create_forum_topic(where.chat_id, name[:MAX_TOPIC_NAME])
            return conversation(account, Place(where.chat_id, topic.message_thread_id))
        intro = f"{name}: its answers come as replies to this message; reply to them to join in."
        root = await self._send(bot, where, intro, key)
        self._manager.chains.put((where.chat_id, root), root)
        return conversation(account, Place(where.chat_id, root_id=root))

    async def _is_forum(self, bot: Bot, chat_id: int) -> bool:
        if chat_id > 0:  # a person's private chat (groups' ids are negative): never a forum
            return False
        known = self._manager.forums.get(chat_id)
        if known is None:
            known = bool((await bot.get_chat(chat_id)).is_forum)
            self._manager.forums.put(chat_id, known)
        return known

    async def _send(self, bot: Bot, where: Place, text: str, key: str) -> int:
        """Each part once (as far as this server remembers); the last part's message id."""
        sent = 0
        for number, part in enumerate(parts(text)):
            part_key = key if number == 0 else f"{key}:{number}"
            known = self._manager.sent.get(part_key)
            if known is None:
                message = await bot.send_message(
                    where.chat_id,
                    part,
                    message_thread_id=where.topic_id,
                    reply_to_message_id=where.root_id,
                )
                known = message.message_id
                self._manager.sent.put(part_key, known)
                if where.root_id is not None:
                    self._manager.chains.put((where.chat_id, known), where.root_id)
            sent = known
        return sent

    @asynccontextmanager
    async def _speaking(self) -> AsyncIterator[None]:
        """Telegram's failures as Parley's, the account's state told of them."""
        manager = self._manager
        try:
            async with speaking_to_telegram():
                yield
        except Unavailable as exc:
            manager.states.failed(TELEGRAM, manager.account_id, exc.message)
            wait = exc.fields.get("retry_after_seconds")
            if isinstance(wait, float):  # after the failure: setting a phase forgets the limit
                manager.rate_limited(wait)
            raise
        except Unauthorized as exc:
            manager.report(AccountPhase.REFUSED, exc.message)
            raise
        except ParleyError as exc:
            manager.states.failed(TELEGRAM, manager.account_id, exc.message)
            raise


def parts(text: str) -> list[str]:
    """Telegram takes 4096 UTF-16 code units a message: longer text goes in several, in order,
    never splitting a character."""
    found: list[str] = []
    start, units = 0, 0
    for index, char in enumerate(text):
        width = 2 if ord(char) > 0xFFFF else 1
        if units + width > MAX_MESSAGE:
            found.append(text[start:index])
            start, units = index, 0
        units += width
    found.append(text[start:])
    return found
