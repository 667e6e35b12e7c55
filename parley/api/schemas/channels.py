"""Channels: accounts, linked users, and the web channel's conversations as people use them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from parley.api.schemas.base import NAME, Body, capped, example
from parley.api.schemas.bindings import ConversationRefOut
from parley.channels.accounts import MAX_TOKEN
from parley.channels.connected import AccountState
from parley.channels.model import ChannelAccount, WebConversation, WebMessage
from parley.channels.web.conversations import MAX_TITLE, WebConversationDetail


class AccountIn(Body):
    model_config = example(default_agent="scribe")

    default_agent: str | None = Field(
        None, description="where messages go when no binding holds their conversation",
        json_schema_extra=NAME,
    )  # fmt: skip


class TokenIn(Body):
    model_config = example(token="MTIz.abc.xyz")

    token: str = Field(
        description="the account's secret (a bot token; Slack's bot and app-level tokens, one"
        " per line), surrounding spaces trimmed; never shown back",
        json_schema_extra=capped(2 * MAX_TOKEN + 1, 1),
    )


class AccountOut(BaseModel):
    channel: str
    account_id: str
    default_agent: str | None
    created_at: datetime
    has_token: bool = Field(description="its secret is set (the secret itself is never shown)")
    last_inbound_at: datetime | None = Field(description="when a user's message last came in")
    last_outbound_at: datetime | None = Field(description="when it last posted anything")
    state: str | None = Field(
        None,
        description="what its connection is doing now (connecting, connected, disconnected,"
        " refused, no-token); none for an account no connection is kept for",
    )
    last_error: str | None = Field(None, description="the last thing that went wrong, if any")
    rate_limited_until: datetime | None = Field(
        None, description="the service asked Parley to wait until then"
    )

    @classmethod
    def of(cls, account: ChannelAccount, live: AccountState | None = None) -> AccountOut:
        return cls(
            state=None if live is None else live.phase.value,
            last_error=None if live is None else live.last_error,
            rate_limited_until=None if live is None else live.rate_limited_until,
            channel=account.channel,
            account_id=account.account_id,
            default_agent=account.default_agent,
            created_at=account.created_at,
            has_token=account.has_token,
            last_inbound_at=account.last_inbound_at,
            last_outbound_at=account.last_outbound_at,
        )


class IdentityIn(Body):
    model_config = example(person="ada")

    person: str = Field(json_schema_extra=NAME)


class IdentityOut(BaseModel):
    user_id: str
    person: str


class TitleIn(Body):
    model_config = example(title="planning the trip")

    title: str = Field(min_length=1, json_schema_extra=capped(MAX_TITLE))


class WebConversationOut(BaseModel):
    id: int
    account_id: str
    parent_id: int | None
    title: str
    person: str | None
    ref: ConversationRefOut = Field(description="the conversation as bindings name it")
    created_at: datetime

    @classmethod
    def of(cls, conversation: WebConversation) -> WebConversationOut:
        return cls(
            id=conversation.id,
            account_id=conversation.account_id,
            parent_id=conversation.parent_id,
            title=conversation.title,
            person=conversation.person_name,
            ref=ConversationRefOut.of(conversation.ref),
            created_at=conversation.created_at,
        )


class WebMessageOut(BaseModel):
    id: int
    author: str = Field(description="person:NAME, an agent's name, or parley")
    body: str
    created_at: datetime

    @classmethod
    def of(cls, message: WebMessage) -> WebMessageOut:
        return cls(
            id=message.id, author=message.author, body=message.body, created_at=message.created_at
        )


class WebConversationDetailOut(BaseModel):
    conversation: WebConversationOut
    threads: list[WebConversationOut]
    messages: list[WebMessageOut] = Field(description="oldest first")

    @classmethod
    def of(cls, found: WebConversationDetail) -> WebConversationDetailOut:
        return cls(
            conversation=WebConversationOut.of(found.conversation),
            threads=[WebConversationOut.of(t) for t in found.threads],
            messages=[WebMessageOut.of(m) for m in found.messages],
        )
