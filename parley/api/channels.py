"""/api/v1/channels: channel accounts and their linked users (owners), and the built-in web
channel's conversations and threads, where people write and agents' posts are read."""

from __future__ import annotations

from fastapi import APIRouter, Response

from parley.api.deps import Caller, Ctx
from parley.api.ids import Id
from parley.api.schemas.channels import (
    AccountIn,
    AccountOut,
    IdentityIn,
    IdentityOut,
    TitleIn,
    TokenIn,
    WebConversationDetailOut,
    WebConversationOut,
)
from parley.api.schemas.topics import QueuedOut, TextIn
from parley.channels import accounts
from parley.channels.model import ChannelAccount
from parley.channels.web import conversations as web
from parley.context import Context
from parley.people.accounts import require_owner

router = APIRouter(tags=["channels"])
ACCOUNT = "/channels/{channel}/accounts/{account_id}"
WEB_CONVERSATIONS = "/channels/web/{account_id}/conversations"


@router.get("/channels/accounts")
async def list_accounts(caller: Caller, ctx: Ctx) -> list[AccountOut]:
    """Channel accounts (owners), with their default agent."""
    require_owner(caller, "read channel accounts")
    async with ctx.store.transaction() as tx:
        return [_out(ctx, account) for account in await tx.channels.accounts()]


def _out(ctx: Context, account: ChannelAccount) -> AccountOut:
    live = ctx.runtime.channels.states.of(account.channel, account.account_id)
    return AccountOut.of(account, live)


@router.put(ACCOUNT)
async def set_account(
    channel: str, account_id: str, body: AccountIn, caller: Caller, ctx: Ctx
) -> AccountOut:
    """Make a channel account or change its default agent (owners)."""
    async with ctx.store.transaction() as tx:
        account = await accounts.set_account(
            tx, ctx.clock, caller, channel, account_id, body.default_agent
        )
    return _out(ctx, account)


@router.put(ACCOUNT + "/token")
async def set_token(
    channel: str, account_id: str, body: TokenIn, caller: Caller, ctx: Ctx
) -> AccountOut:
    """Set or replace the account's secret (owners); its adapter uses it from its next call."""
    async with ctx.store.transaction() as tx:
        account = await accounts.set_token(tx, caller, channel, account_id, body.token)
    return _out(ctx, account)


@router.delete(ACCOUNT + "/token")
async def clear_token(channel: str, account_id: str, caller: Caller, ctx: Ctx) -> AccountOut:
    """Forget the account's secret (owners): its adapter stops at its next call."""
    async with ctx.store.transaction() as tx:
        account = await accounts.set_token(tx, caller, channel, account_id, None)
    return _out(ctx, account)


@router.get(ACCOUNT + "/identities")
async def list_identities(
    channel: str, account_id: str, caller: Caller, ctx: Ctx
) -> list[IdentityOut]:
    """The account's users known as people (its allow-list), by user (owners)."""
    async with ctx.store.transaction() as tx:
        found = await accounts.identities(tx, caller, channel, account_id)
    return [IdentityOut(user_id=user, person=person) for user, person in found]


@router.put(ACCOUNT + "/identities/{user_id}", status_code=204)
async def link(
    channel: str, account_id: str, user_id: str, body: IdentityIn, caller: Caller, ctx: Ctx
) -> Response:
    """Know a channel user as a person (owners); linking again moves the link."""
    async with ctx.store.transaction() as tx:
        await accounts.link_identity(
            tx, ctx.clock, caller, channel, account_id, user_id, body.person
        )
    return Response(status_code=204)


@router.delete(ACCOUNT + "/identities/{user_id}", status_code=204)
async def unlink(channel: str, account_id: str, user_id: str, caller: Caller, ctx: Ctx) -> Response:
    """Forget a channel user (owners): their messages are refused from now on."""
    async with ctx.store.transaction() as tx:
        await accounts.unlink_identity(tx, caller, channel, account_id, user_id)
    return Response(status_code=204)


@router.post(WEB_CONVERSATIONS, status_code=201)
async def open_conversation(
    account_id: str, body: TitleIn, caller: Caller, ctx: Ctx
) -> WebConversationOut:
    """Open a web conversation of your own on an account."""
    async with ctx.store.transaction() as tx:
        made = await web.open_conversation(tx, ctx.clock, caller, account_id, body.title)
    return WebConversationOut.of(made)


@router.get(WEB_CONVERSATIONS)
async def list_conversations(account_id: str, caller: Caller, ctx: Ctx) -> list[WebConversationOut]:
    """Your web conversations on an account, oldest first (owners: everyone's)."""
    async with ctx.store.transaction() as tx:
        found = await web.listed(tx, caller, account_id)
    return [WebConversationOut.of(conversation) for conversation in found]


@router.get(WEB_CONVERSATIONS + "/{conversation_id}")
async def show_conversation(
    account_id: str, conversation_id: Id, caller: Caller, ctx: Ctx
) -> WebConversationDetailOut:
    """A web conversation with its threads and what was said in it, oldest first."""
    async with ctx.store.transaction() as tx:
        found = await web.detail(tx, caller, account_id, conversation_id)
    return WebConversationDetailOut.of(found)


@router.post(WEB_CONVERSATIONS + "/{conversation_id}/threads", status_code=201)
async def open_thread(
    account_id: str, conversation_id: Id, body: TitleIn, caller: Caller, ctx: Ctx
) -> WebConversationOut:
    """Open a thread under a web conversation."""
    async with ctx.store.transaction() as tx:
        made = await web.open_thread(tx, ctx.clock, caller, account_id, conversation_id, body.title)
    return WebConversationOut.of(made)


@router.post(WEB_CONVERSATIONS + "/{conversation_id}/messages", status_code=202)
async def write(
    account_id: str, conversation_id: Id, body: TextIn, caller: Caller, ctx: Ctx
) -> QueuedOut:
    """Write in your web conversation: to the session bound to it, else to the account's
    default agent in your conversation with it; the reply is posted back here."""
    async with ctx.store.transaction() as tx:
        queued = await web.write(tx, ctx.clock, caller, account_id, conversation_id, body.text)
    return QueuedOut.of(queued)
