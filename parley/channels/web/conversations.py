"""The web channel's conversations, as people use them through the API: a person opens
conversations on an account, threads under them, and writes in them; what they write goes where
``inbound`` says, and what agents post there is read back from the same rows. A conversation is
its person's alone, as a person's conversation is: what comes back there is from their own
conversations and the sessions bound to it for them, so another person, even an owner, reads
nothing of it (it is absent for them, as what does not exist)."""

from __future__ import annotations

from dataclasses import dataclass

from parley.channels.inbound import Refused, receive_from_person
from parley.channels.model import WEB, ChannelAccount, WebConversation, WebMessage
from parley.clock import Clock
from parley.errors import Forbidden, Invalid, NotFound
from parley.people.model import Person
from parley.runs.queueing import Queued
from parley.store import Tx
from parley.text import check_length, refuse_nul

MAX_TITLE = 200


@dataclass(frozen=True)
class WebConversationDetail:
    conversation: WebConversation
    threads: list[WebConversation]
    messages: list[WebMessage]


async def web_account(tx: Tx, account_id: str) -> ChannelAccount:
    account = await tx.channels.account(WEB, account_id)
    if account is None:
        raise NotFound(f"no web account {account_id!r}", field="account")
    return account


def _title(title: str) -> str:
    title = refuse_nul(check_length(title.strip(), MAX_TITLE, "title"), "title")
    if not title:
        raise Invalid("title: give a few words", field="title")
    return title


async def open_conversation(
    tx: Tx, clock: Clock, person: Person, account_id: str, title: str
) -> WebConversation:
    await web_account(tx, account_id)
    return await tx.channels.add_web_conversation(account_id, _title(title), person.id, clock.now())


async def readable(
    tx: Tx, person: Person, account_id: str, conversation_id: int
) -> WebConversation:
    """Another person's conversation is absent to a member: the same 404 as none at all, which
    neither says it exists nor whose it is."""
    found = await tx.channels.web_conversation(conversation_id)
    if found is None or found.account_id != account_id or found.person_id != person.id:
        raise NotFound(f"no web conversation {conversation_id} on account {account_id!r}")
    return found


async def open_thread(
    tx: Tx, clock: Clock, person: Person, account_id: str, parent_id: int, title: str
) -> WebConversation:
    parent = await readable(tx, person, account_id, parent_id)
    if parent.parent_id is not None:
        raise Invalid(f"web conversation {parent_id} is a thread: threads have no threads")
    return await tx.channels.add_web_conversation(
        account_id, _title(title), parent.person_id, clock.now(), parent_id=parent.id
    )


async def write(
    tx: Tx, clock: Clock, person: Person, account_id: str, conversation_id: int, text: str
) -> Queued:
    """The person writes in their conversation: kept there, and given to its session."""
    conversation = await readable(tx, person, account_id, conversation_id)
    queued = await receive_from_person(tx, clock, person, conversation.ref, text)
    if isinstance(queued, Refused):  # its one person was checked when it was bound
        raise Forbidden(queued.text)
    await tx.channels.add_web_message(conversation.id, f"person:{person.name}", text, clock.now())
    return queued


async def detail(
    tx: Tx, person: Person, account_id: str, conversation_id: int
) -> WebConversationDetail:
    conversation = await readable(tx, person, account_id, conversation_id)
    threads = await tx.channels.web_conversations(account_id, None, conversation.id)
    return WebConversationDetail(
        conversation, threads, await tx.channels.web_messages(conversation.id)
    )


async def listed(tx: Tx, person: Person, account_id: str) -> list[WebConversation]:
    """The account's conversations: the person's own."""
    await web_account(tx, account_id)
    return await tx.channels.web_conversations(account_id, person.id, None)
