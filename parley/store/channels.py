"""Channel accounts and their people (identities), and the web channel's own conversations and
messages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from parley.channels.model import ChannelAccount, ConversationRef, WebConversation, WebMessage
from parley.people.model import Person
from parley.store.connection import Connection
from parley.store.people import person_of_row
from parley.store.tables import (
    agents,
    channel_accounts,
    channel_identities,
    channel_people,
    people,
    web_conversations,
    web_messages,
)

_ACCOUNTS = select(channel_accounts, agents.c.name.label("default_agent")).outerjoin(
    agents, agents.c.id == channel_accounts.c.default_agent_id
)
_WEB = select(web_conversations, people.c.name.label("person_name")).outerjoin(
    people, people.c.id == web_conversations.c.person_id
)


def _met(dialect: Any) -> Any:
    """A person met in a conversation, kept once (the first time)."""
    return dialect.insert(channel_people).on_conflict_do_nothing(
        index_elements=[
            channel_people.c.channel,
            channel_people.c.account_id,
            channel_people.c.conversation_id,
            channel_people.c.person_id,
        ]
    )


_MET = {"sqlite": _met(sqlite), "postgresql": _met(postgresql)}


def _in(ref: ConversationRef) -> Any:
    return (
        (channel_people.c.channel == ref.channel)
        & (channel_people.c.account_id == ref.account_id)
        & (channel_people.c.conversation_id == ref.conversation_id)
    )


def _account(row: Any) -> ChannelAccount:
    return ChannelAccount(
        id=row.id,
        channel=row.channel,
        account_id=row.account_id,
        default_agent=row.default_agent,
        created_at=row.created_at,
        has_token=row.token is not None,
        last_inbound_at=row.last_inbound_at,
        last_outbound_at=row.last_outbound_at,
    )


def _conversation(row: Any) -> WebConversation:
    return WebConversation(
        id=row.id,
        account_id=row.account_id,
        parent_id=row.parent_id,
        title=row.title,
        person_id=row.person_id,
        person_name=row.person_name,
        created_at=row.created_at,
    )


def _message(row: Any) -> WebMessage:
    return WebMessage(row.id, row.conversation_id, row.author, row.body, row.created_at)


class ChannelsRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def add_account(
        self, channel: str, account_id: str, default_agent_id: int | None, now: datetime
    ) -> ChannelAccount:
        await self._c.execute(
            insert(channel_accounts).values(
                channel=channel,
                account_id=account_id,
                default_agent_id=default_agent_id,
                created_at=now,
            )
        )
        found = await self.account(channel, account_id)
        assert found is not None
        return found

    async def set_default_agent(self, account: int, agent_id: int | None) -> None:
        await self._c.execute(
            update(channel_accounts)
            .where(channel_accounts.c.id == account)
            .values(default_agent_id=agent_id)
        )

    async def set_token(self, account: int, token: str | None) -> None:
        await self._c.execute(
            update(channel_accounts).where(channel_accounts.c.id == account).values(token=token)
        )

    async def token_of(self, channel: str, account_id: str) -> str | None:
        """The account's secret, for its adapter only (never an answer of the API)."""
        query = select(channel_accounts.c.token).where(
            channel_accounts.c.channel == channel, channel_accounts.c.account_id == account_id
        )
        found: str | None = (await self._c.execute(query)).scalar_one_or_none()
        return found

    async def record_activity(
        self, channel: str, account_id: str, at: datetime, *, outbound: bool
    ) -> None:
        column = "last_outbound_at" if outbound else "last_inbound_at"
        await self._c.execute(
            update(channel_accounts)
            .where(
                channel_accounts.c.channel == channel, channel_accounts.c.account_id == account_id
            )
            .values({column: at})
        )

    async def account(self, channel: str, account_id: str) -> ChannelAccount | None:
        query = _ACCOUNTS.where(
            channel_accounts.c.channel == channel, channel_accounts.c.account_id == account_id
        )
        row = (await self._c.execute(query)).first()
        return _account(row) if row else None

    async def accounts(self) -> list[ChannelAccount]:
        query = _ACCOUNTS.order_by(channel_accounts.c.channel, channel_accounts.c.account_id)
        return [_account(row) for row in await self._c.execute(query)]

    async def link(self, account: int, user_id: str, person_id: int, now: datetime) -> None:
        """Know ``user_id`` of this account as the person; linking again moves the link."""
        await self.unlink(account, user_id)
        await self._c.execute(
            insert(channel_identities).values(
                account_ref=account, user_id=user_id, person_id=person_id, linked_at=now
            )
        )

    async def unlink(self, account: int, user_id: str) -> bool:
        result = await self._c.execute(
            channel_identities.delete().where(
                channel_identities.c.account_ref == account,
                channel_identities.c.user_id == user_id,
            )
        )
        return result.rowcount == 1

    async def person_of(self, account: int, user_id: str) -> int | None:
        query = select(channel_identities.c.person_id).where(
            channel_identities.c.account_ref == account, channel_identities.c.user_id == user_id
        )
        found: int | None = (await self._c.execute(query)).scalar_one_or_none()
        return found

    async def identities(self, account: int) -> list[tuple[str, str]]:
        """(channel user, person's name) of an account, by user."""
        query = (
            select(channel_identities.c.user_id, people.c.name)
            .join(people, people.c.id == channel_identities.c.person_id)
            .where(channel_identities.c.account_ref == account)
            .order_by(channel_identities.c.user_id)
        )
        return [(row.user_id, row.name) for row in await self._c.execute(query)]

    async def met(self, ref: ConversationRef, person_id: int, now: datetime) -> None:
        """``person_id`` wrote or bound in ``ref``: one of the people Parley knows there."""
        values = {"channel": ref.channel, "account_id": ref.account_id,
                  "conversation_id": ref.conversation_id, "person_id": person_id,
                  "first_at": now}  # fmt: skip
        await self._c.execute(_MET[self._c.dialect.name], values)

    async def people_in(self, ref: ConversationRef) -> list[Person]:
        """The people Parley knows in ``ref`` (who wrote or bound there), by name."""
        query = (
            select(people)
            .join(channel_people, channel_people.c.person_id == people.c.id)
            .where(_in(ref))
            .order_by(people.c.name)
        )
        return [person_of_row(row) for row in await self._c.execute(query)]

    async def add_web_conversation(
        self,
        account_id: str,
        title: str,
        person_id: int | None,
        now: datetime,
        parent_id: int | None = None,
        key: str | None = None,
    ) -> WebConversation:
        """A new one; with ``key``, the one this key made before, if any."""
        if key is not None and (made := await self._web_by_key(key)) is not None:
            return made
        values = {"account_id": account_id, "title": title, "person_id": person_id,
                  "parent_id": parent_id, "idempotency_key": key, "created_at": now}  # fmt: skip
        result = await self._c.execute(
            insert(web_conversations).values(**values).returning(web_conversations.c.id)
        )
        made = await self.web_conversation(int(result.scalar_one()))
        assert made is not None
        return made

    async def _web_by_key(self, key: str) -> WebConversation | None:
        query = _WEB.where(web_conversations.c.idempotency_key == key)
        row = (await self._c.execute(query)).first()
        return _conversation(row) if row else None

    async def web_conversation(self, conversation_id: int) -> WebConversation | None:
        row = (await self._c.execute(_WEB.where(web_conversations.c.id == conversation_id))).first()
        return _conversation(row) if row else None

    async def web_conversations(
        self, account_id: str, person_id: int | None, parent_id: int | None
    ) -> list[WebConversation]:
        """An account's conversations (``person_id``: only theirs), or a conversation's
        threads; oldest first."""
        query = _WEB.where(web_conversations.c.account_id == account_id).order_by(
            web_conversations.c.id
        )
        if parent_id is None:
            query = query.where(web_conversations.c.parent_id.is_(None))
        else:
            query = query.where(web_conversations.c.parent_id == parent_id)
        if person_id is not None:
            query = query.where(web_conversations.c.person_id == person_id)
        return [_conversation(row) for row in await self._c.execute(query)]

    async def add_web_message(
        self, conversation_id: int, author: str, body: str, now: datetime, key: str | None = None
    ) -> int:
        """The message's id; a key already posted posts nothing and gives the first one's id."""
        if key is not None:
            query = select(web_messages.c.id).where(web_messages.c.idempotency_key == key)
            posted: int | None = (await self._c.execute(query)).scalar_one_or_none()
            if posted is not None:
                return posted
        values = {"conversation_id": conversation_id, "author": author, "body": body,
                  "idempotency_key": key, "created_at": now}  # fmt: skip
        result = await self._c.execute(
            insert(web_messages).values(**values).returning(web_messages.c.id)
        )
        return int(result.scalar_one())

    async def web_messages(self, conversation_id: int) -> list[WebMessage]:
        query = (
            select(web_messages)
            .where(web_messages.c.conversation_id == conversation_id)
            .order_by(web_messages.c.id)
        )
        return [_message(row) for row in await self._c.execute(query)]
