"""The Slack adapter of one account, as the outbox uses it (``ChannelAdapter``): a post goes
with ``chat.postMessage`` as the bot, under the agent's name when it speaks for one (the
``chat:write.customize`` scope; without it, Slack refuses and the post goes plain), once by key
(``once``), in parts of 4000 characters, each with its own key. A thread is the one under an
intro posted in its parent channel with the key, so that a repeated attempt finds the intro the
first one posted and gives back the same thread. Every send records the account's activity and
touches the binding it went through; a bound thread or channel Slack no longer has (deleted,
archived) ends its binding."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from parley.channels.hearing import posting, record_outbound
from parley.channels.model import ConversationRef, SessionBindingRecord
from parley.channels.slack import once
from parley.channels.slack.failures import error_code
from parley.channels.slack.manager import SlackAccountManager
from parley.channels.slack.refs import conversation, place
from parley.clock import Clock
from parley.errors import Invalid

log = logging.getLogger(__name__)

NO_PERSONA = frozenset({"missing_scope", "not_allowed"})  # without chat:write.customize
MAX_USERNAME = 80


class SlackAdapter:
    def __init__(self, manager: SlackAccountManager, clock: Clock) -> None:
        self._manager, self._clock = manager, clock
        self._sent = once.SentKeys()
        self._plain_only = False  # Slack refused a persona once: it will again

    async def post(
        self, ref: ConversationRef, text: str, persona: str | None, idempotency_key: str
    ) -> str:
        channel, thread_ts = place(ref)

        async def send(_: SessionBindingRecord | None) -> str:
            return await self._post_once(channel, thread_ts, text, persona, idempotency_key)

        return await posting(self._manager.store, self._clock, ref, send)

    async def create_thread(
        self, parent: ConversationRef, name: str, idempotency_key: str
    ) -> ConversationRef:
        channel, thread_ts = place(parent)
        if thread_ts is not None:
            raise Invalid(f"{parent} is a thread: Slack threads have no threads")
        intro = f"{name}: its answers come in the thread under this message."
        ts = await self._post_once(channel, None, intro, None, idempotency_key)
        await record_outbound(self._manager.store, self._clock, parent, None)
        # Slack names a thread by the ts of the message it hangs from.
        return conversation(parent.account_id, channel, ts)

    async def _post_once(
        self, channel: str, thread_ts: str | None, text: str, persona: str | None, key: str
    ) -> str:
        """Each part posted unless Slack took it before; the last part's ts."""
        pieces = once.parts(text, key)
        async with self._manager.speaking():
            web = self._manager.web(await self._manager.bot_token())
            missing = {k for k, _ in pieces if self._sent.ts(k) is None}
            if missing:
                bot_id = (await self._manager.whoami()).bot_id
                window = self._manager.settings.once_window
                for k, ts in (await once.marked(web, channel, thread_ts, missing, window,
                                                bot_id)).items():  # fmt: skip
                    log.info("slack post %s was taken before: not posted again", k)
                    self._sent.took(k, ts)
            ts = ""
            for part_key, piece in pieces:
                ts = self._sent.ts(part_key) or await self._send(
                    web, channel, thread_ts, piece, persona, part_key
                )
                self._sent.took(part_key, ts)
        return ts

    async def _send(
        self,
        web: AsyncWebClient,
        channel: str,
        thread_ts: str | None,
        text: str,
        persona: str | None,
        key: str,
    ) -> str:
        username = None if persona is None or self._plain_only else persona[:MAX_USERNAME]
        try:
            answer = await web.chat_postMessage(channel=channel, thread_ts=thread_ts,
                                                text=once.escaped(text), username=username,
                                                metadata=once.metadata(key))  # fmt: skip
        except SlackApiError as exc:
            if username is None or error_code(exc) not in NO_PERSONA:
                raise
            log.warning("slack: no persona (add the chat:write.customize scope): %s",
                        error_code(exc))  # fmt: skip
            self._plain_only = True  # refused, so nothing was posted: post plain
            return await self._send(web, channel, thread_ts, text, None, key)
        return str(answer["ts"])
