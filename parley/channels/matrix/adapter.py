"""The Matrix adapter of one account, as the outbox uses it (``ChannelAdapter``).

Exactly once: every post is ``PUT /rooms/{room}/send/m.room.message/{txnId}`` with a
transaction id derived from the outbox key (each part of a long text from its own derived
key), and the homeserver answers a transaction id it has seen with the event it made then,
posting nothing again; so an attempt whose answer was lost, retried (even after a restart),
posts once. What remains: the homeserver keeps transaction ids per access token (per device)
and for a limited time, so a retry made after the token was rotated, or long after the
first attempt, may post a second time.

A thread is started by an intro message in the room (sent with the key's transaction id, so
a repeated attempt gets the same event back); its event is the thread's root. A post in a
thread names the root (``m.thread``); an agent's name goes with it as a per-message profile
(MSC4144) where clients show one. Every send records the account's activity and touches the
binding it went through; a room the bot was removed from, or a thread Matrix no longer has
(403 or 404 answered to a send), ends the binding there, and the refusal is final."""

from __future__ import annotations

from parley.channels.hearing import posting, record_outbound
from parley.channels.matrix.account import MatrixAccount
from parley.channels.matrix.failures import speaking_to_matrix
from parley.channels.matrix.refs import place, thread
from parley.channels.matrix.sending import content, send, send_text
from parley.channels.model import ConversationRef, SessionBindingRecord
from parley.errors import Forbidden, Invalid, NotFound

MAX_THREAD_NAME = 200


class MatrixAdapter:
    def __init__(self, account: MatrixAccount) -> None:
        self._account = account

    async def post(
        self, ref: ConversationRef, text: str, persona: str | None, idempotency_key: str
    ) -> str:
        room_id, root = place(ref)
        account = self._account
        client = await account.client()  # no token is no verdict on the place: outside ``gone``

        async def send(_: SessionBindingRecord | None) -> str:
            async with speaking_to_matrix(account.rate_limited):
                return await send_text(client, room_id, root, text, idempotency_key, persona)

        # A room the bot was removed from answers 403: gone, like a missing one.
        return await posting(account.store, account.clock, ref, send, (Forbidden, NotFound))

    async def create_thread(
        self, parent: ConversationRef, name: str, idempotency_key: str
    ) -> ConversationRef:
        if parent.parent_conversation_id is not None:
            raise Invalid(f"{parent} is a thread: Matrix threads have no threads")
        room_id, _ = place(parent)
        account = self._account
        intro = f"{name[:MAX_THREAD_NAME]}: its answers come in the thread under this message."
        client = await account.client()
        async with speaking_to_matrix(account.rate_limited):
            root = await send(client, room_id, content(intro, None), idempotency_key)
        await record_outbound(account.store, account.clock, parent, None)
        return thread(parent.account_id, room_id, root)
