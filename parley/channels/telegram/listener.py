"""What comes in through the long poll. A person's text message goes to ``hearing.heard`` in
the place it was said (a chat, a forum topic, a reply chain); ``/focus`` and ``/unfocus`` bind
and unbind that place. Never taken as text: the bot's own messages and other bots' (Telegram
shows a bot its own posts only as what a reply answers, never as an update, but a bot's
message is refused however it comes), messages sent on behalf of a chat or channel, service
messages (members joining, a topic made, a message pinned…), messages without text (photos,
stickers), and, because only ``message`` updates are asked for, edits (``edited_message``:
Telegram users expect an edit to fix what they see, not to say it again; the agent keeps what
was first said) and channel posts. Telegram tells bots of no deletions. A text longer than
Telegram allows, or with NUL characters, cannot come from Telegram: it is ignored with a log
line. A forum topic closed ends the binding it held.

A reply chain (a thread where there are no topics) is known by what a reply answers: the
chain's root message, or a message said in the chain (the bot's posts there and people's
replies there, remembered while the server runs); a reply to anything else is said in the chat.
After a restart, a reply to the root of a bound chain still belongs to it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from telegram import Message, Update

from parley.channels import focus as focusing
from parley.channels import hearing
from parley.channels.model import ConversationRef
from parley.channels.telegram.adapter import MAX_MESSAGE
from parley.channels.telegram.failures import speaking_to_telegram
from parley.channels.telegram.manager import TelegramAccountManager
from parley.channels.telegram.refs import Place, conversation
from parley.errors import ParleyError
from parley.store import Tx

log = logging.getLogger(__name__)

TOPIC_CLOSED = "thread-archived"  # why a binding ended when its forum topic was closed
Command = Callable[[Tx, ConversationRef, str], Awaitable[str]]


class Listener:
    def __init__(self, manager: TelegramAccountManager) -> None:
        self.manager = manager

    async def update(self, update: Update) -> None:
        message = update.message
        if message is None:
            log.info(
                "telegram account %r: update %d is no message, ignored",
                self.manager.account_id,
                update.update_id,
            )
            return
        where = await self.place_of(message)
        ref = conversation(self.manager.account_id, where)
        if message.forum_topic_closed is not None and where.topic_id is not None:
            await hearing.thread_gone(self.manager.store, self.manager.clock, ref, TOPIC_CLOSED)
            return
        text = self._text_of(message)
        if text is None:
            return
        if where.root_id is not None:
            self.manager.chains.put((where.chat_id, message.message_id), where.root_id)
        assert message.from_user is not None
        user_id = str(message.from_user.id)
        command, text = self._command(text)
        if command == "elsewhere":  # another bot's command
            return
        act = self._act(command, text)
        if act is not None:
            await self._answer(message, where, ref, user_id, act)
            return
        key = f"{where.chat_id}:{message.message_id}"  # ids count per chat
        await hearing.heard(self.manager.store, self.manager.clock, ref, user_id, key, text)

    def _act(self, command: str | None, text: str) -> Command | None:
        clock, lifetimes = self.manager.clock, self.manager.settings.thread_bindings
        if command == "focus":
            target = text.partition(" ")[2]
            return lambda tx, ref, user: focusing.focus(tx, clock, ref, user, target, lifetimes)
        if command == "unfocus":
            return lambda tx, ref, user: focusing.unfocus(tx, clock, ref, user)
        return None

    async def place_of(self, message: Message) -> Place:
        chat = message.chat
        if chat.is_forum:
            self.manager.forums.put(chat.id, True)
            if message.is_topic_message and message.message_thread_id is not None:
                return Place(chat.id, topic_id=message.message_thread_id)
            return Place(chat.id)
        answered = message.reply_to_message
        if answered is None:
            return Place(chat.id)
        root = self.manager.chains.get((chat.id, answered.message_id))
        if root is None:
            as_root = conversation(
                self.manager.account_id, Place(chat.id, root_id=answered.message_id)
            )
            if await hearing.live_binding_at(self.manager.store, as_root) is not None:
                root = answered.message_id
        return Place(chat.id) if root is None else Place(chat.id, root_id=root)

    def _text_of(self, message: Message) -> str | None:
        """A person's text, or None (with a log line for what should not come)."""
        author, account = message.from_user, self.manager.account_id
        if author is None or author.is_bot or message.sender_chat is not None:
            log.info(
                "telegram account %r: message %d from no person, ignored",
                account,
                message.message_id,
            )
            return None
        text = message.text
        if text is None:  # a service message, a photo, a sticker…
            return None
        if len(text.encode("utf-16-le")) // 2 > MAX_MESSAGE or "\x00" in text:
            log.warning(
                "telegram account %r: message %d is no Telegram text (too long or NUL), ignored",
                account,
                message.message_id,
            )
            return None
        return text

    def _command(self, text: str) -> tuple[str | None, str]:
        """The command a text is (``focus``, ``unfocus``; ``elsewhere`` for another bot's) and
        the text without the bot's name after the command (``/approve@Bot 3`` → ``/approve 3``)."""
        if not text.startswith("/"):
            return None, text
        first, space, rest = text.partition(" ")
        name, _, addressed = first[1:].partition("@")
        me = self.manager.me
        if addressed and (me is None or addressed.lower() != (me.username or "").lower()):
            return "elsewhere", text
        bare = f"/{name}{space}{rest}"
        return (name if name in ("focus", "unfocus") else None), bare

    async def _answer(
        self, message: Message, where: Place, ref: ConversationRef, user_id: str, act: Command
    ) -> None:
        """Run the command in one transaction; answer its outcome (a refusal too) in a reply to
        the person's command: Telegram has no message seen by one person only."""
        try:
            async with self.manager.store.transaction() as tx:
                words = await act(tx, ref, user_id)
        except ParleyError as exc:
            words = exc.message
        try:
            async with speaking_to_telegram():
                bot = await self.manager.bot()
                sent = await bot.send_message(
                    where.chat_id,
                    words,
                    message_thread_id=where.topic_id,
                    reply_to_message_id=message.message_id,
                )
            if where.root_id is not None:  # a reply to the answer is said in the chain
                self.manager.chains.put((where.chat_id, sent.message_id), where.root_id)
        except ParleyError as exc:
            log.warning(
                "telegram account %r: a command's answer was not posted: %s",
                self.manager.account_id,
                exc.message,
            )
