"""``!focus AGENT-or-topic:ID`` and ``!unfocus``, said in a room or thread: Matrix has no
application commands, so a message starting with the command word is one (never text for an
agent). Each runs in one store transaction and is answered with a notice (``m.notice``,
which bots and Parley ignore) replying to the command. Matrix has no ephemeral messages: the
answer is seen by everyone in the room. The answer is sent at once, not through the outbox
(its transaction id derived from the command's event, so a command heard twice is answered
once); one that cannot be sent is logged, and the command has taken effect all the same."""

from __future__ import annotations

import logging

from mautrix.client import ClientAPI

from parley.channels import focus as focusing
from parley.channels.matrix.account import MatrixAccount
from parley.channels.matrix.failures import speaking_to_matrix
from parley.channels.matrix.inbound import Said
from parley.channels.matrix.sending import content, send
from parley.errors import Invalid, ParleyError

log = logging.getLogger(__name__)

FOCUS, UNFOCUS = "!focus", "!unfocus"


def is_command(text: str) -> bool:
    words = text.split(maxsplit=1)
    return bool(words) and words[0] in (FOCUS, UNFOCUS)


async def run_command(account: MatrixAccount, client: ClientAPI, heard: Said) -> None:
    """Do it, and answer the person in reply (once per command, however often it is heard)."""
    words = await _outcome(account, heard)
    root = heard.ref.conversation_id if heard.ref.parent_conversation_id else None
    answer = content(words, root, msgtype="m.notice", reply_to=heard.event_id)
    try:
        async with speaking_to_matrix(account.rate_limited):
            await send(client, heard.room_id, answer, f"answer:{heard.event_id}")
    except ParleyError as exc:
        log.warning("matrix account %r: a command's answer not sent: %s",
                    account.account_id, exc.message)  # fmt: skip


async def _outcome(account: MatrixAccount, heard: Said) -> str:
    name, _, target = heard.text.strip().partition(" ")
    clock, lifetimes = account.clock, account.settings.thread_bindings
    try:
        async with account.store.transaction() as tx:
            if name == UNFOCUS:
                return await focusing.unfocus(tx, clock, heard.ref, heard.sender)
            if not target.strip():
                raise Invalid("say !focus AGENT (your conversation with it) or !focus topic:ID")
            said = await focusing.focus(
                tx, clock, heard.ref, heard.sender, target.strip(), lifetimes
            )
        return said.replace("/unfocus", UNFOCUS)
    except ParleyError as exc:
        return exc.message
