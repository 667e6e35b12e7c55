"""``/focus AGENT-or-topic:ID`` and ``/unfocus`` on Slack, in two forms, each run in one store
transaction and answered to the person who asked only (a refusal too):

- slash commands, over Socket Mode, answered in the envelope's acknowledgement as an ephemeral
  message; they bind the channel or direct conversation they were typed in (Slack takes no
  slash command in a thread, and does not say in which thread one was typed);
- the same words as a message, ``!focus TARGET`` and ``!unfocus``, which work in threads too
  (and bind the thread), answered with ``chat.postEphemeral``. Such a message is a command,
  never text for an agent."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from parley.channels import focus as focusing
from parley.channels.model import ConversationRef
from parley.channels.slack.manager import Identity, SlackAccountManager
from parley.channels.slack.refs import conversation, is_channel_id, is_user_id, place
from parley.clock import Clock
from parley.errors import Invalid, ParleyError

log = logging.getLogger(__name__)

USAGE = "usage: /focus AGENT (your conversation with it) or /focus topic:ID"
IN_TEXT = {"!focus": "/focus", "!unfocus": "/unfocus"}


async def answer(
    manager: SlackAccountManager, clock: Clock, payload: Mapping[str, Any], me: Identity
) -> str:
    """What a slash command's envelope is answered."""
    command, text = payload.get("command"), payload.get("text")
    channel, user = payload.get("channel_id"), payload.get("user_id")
    team = payload.get("team_id")
    if me.team_id is not None and team is not None and team != me.team_id:
        return "this command came from another workspace"
    if not (is_channel_id(channel) and is_user_id(user) and isinstance(text, str)):
        return "Slack sent a command Parley cannot read"
    ref = conversation(manager.account_id, channel)
    return await run(manager, clock, ref, user, str(command), text)


def in_text(text: str) -> tuple[str, str] | None:
    """The command a message is (``/focus``, ``/unfocus``) and its words, if it is one."""
    word, _, rest = text.strip().partition(" ")
    command = IN_TEXT.get(word.lower())
    return None if command is None else (command, rest.strip())


async def run(
    manager: SlackAccountManager,
    clock: Clock,
    ref: ConversationRef,
    user: str,
    command: str,
    text: str,
) -> str:
    try:
        async with manager.store.transaction() as tx:
            if command == "/focus":
                if not text.strip():
                    raise Invalid(USAGE)
                lifetimes = manager.settings.thread_bindings
                return await focusing.focus(tx, clock, ref, user, text, lifetimes)
            if command == "/unfocus":
                return await focusing.unfocus(tx, clock, ref, user)
        raise Invalid(f"Parley has no command {command!r}: /focus or /unfocus")
    except ParleyError as exc:
        return exc.message


async def tell_only(
    manager: SlackAccountManager, ref: ConversationRef, user: str, words: str
) -> None:
    """Say ``words`` to ``user`` alone where they typed a command (lost if Slack is away: the
    command itself is done, and saying it again says where it stands)."""
    channel, thread_ts = place(ref)
    try:
        async with manager.speaking():
            web = manager.web(await manager.bot_token())
            await web.chat_postEphemeral(channel=channel, user=user, text=words,
                                         thread_ts=thread_ts)  # fmt: skip
    except ParleyError as exc:
        log.warning("slack account %r: a command's answer was not shown: %s",
                    manager.account_id, exc.message)  # fmt: skip
