"""The Slack accounts this server speaks for: a Socket Mode manager (and its adapter in the
registry) for each Slack account given its two tokens, kept connected by ``ConnectedAccounts``.
Slack's Web API address is a setting (Socket Mode's URL comes from it), so that a fake on
loopback stands in for Slack. Each envelope is acknowledged by its ``envelope_id``: an event
at once (Slack sends again what is not acknowledged within 3 seconds), a slash command with its
answer as the acknowledgement's payload."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk.socket_mode.request import SocketModeRequest

from parley.channels import hearing
from parley.channels.connected import AccountStates
from parley.channels.model import ConversationRef
from parley.channels.slack import commands, inbound
from parley.channels.slack.adapter import SlackAdapter
from parley.channels.slack.manager import SlackAccountManager
from parley.channels.slack.socket import ParleySocket
from parley.clock import Clock
from parley.settings import SlackSettings
from parley.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SlackConnection:
    manager: SlackAccountManager
    adapter: SlackAdapter

    async def run(self) -> None:
        await self.manager.run()

    async def close(self) -> None:
        await self.manager.close()


def envelopes(manager: SlackAccountManager, clock: Clock) -> None:
    """What the manager's sessions do with each envelope Slack sends."""
    seen = inbound.Seen()

    async def handle(socket: ParleySocket, request: SocketModeRequest) -> None:
        me = await manager.whoami()
        if request.type == "slash_commands":
            words = await commands.answer(manager, clock, request.payload, me)
            await socket.ack(request.envelope_id, {"response_type": "ephemeral", "text": words})
            return
        await socket.ack(request.envelope_id)
        if request.type == "events_api":
            found = inbound.fresh(manager.account_id, request.payload, me, seen)
            if found is not None:
                await said(manager, clock, *found)
        else:
            log.warning("slack account %r: a %s envelope ignored", manager.account_id, request.type)

    manager.on_request = handle


async def said(
    manager: SlackAccountManager,
    clock: Clock,
    ref: ConversationRef,
    user: str,
    ts: str,
    text: str,
) -> None:
    """A person's message: a command (``!focus``, ``!unfocus``), or text for an agent."""
    command = commands.in_text(text)
    if command is None:
        await hearing.heard(manager.store, clock, ref, user, ts, text)
        return
    words = await commands.run(manager, clock, ref, user, *command)
    await commands.tell_only(manager, ref, user, words)


def connector(
    store: Store, clock: Clock, settings: SlackSettings, states: AccountStates
) -> Callable[[str], SlackConnection]:
    """What connects one account (``ConnectedAccounts``' ``connect``)."""

    def connect(account_id: str) -> SlackConnection:
        manager = SlackAccountManager(store, clock, account_id, settings, states)
        envelopes(manager, clock)
        return SlackConnection(manager, SlackAdapter(manager, clock))

    return connect
