"""Channel accounts and who their users are: an owner sets an account's default agent (where
its conversations' messages go when no binding holds them) and links channel users to people
(the account's allow-list)."""

from __future__ import annotations

import logging

from parley.agents.lookup import agent_by_name
from parley.channels.kinds import kind_of
from parley.channels.model import ChannelAccount, ConversationRef
from parley.clock import Clock
from parley.errors import Invalid, NotFound
from parley.people.accounts import person_by_name, require_owner
from parley.people.model import Person
from parley.store import Tx

log = logging.getLogger(__name__)


async def set_account(
    tx: Tx, clock: Clock, by: Person, channel: str, account_id: str, default_agent: str | None
) -> ChannelAccount:
    """Make the account, or change its default agent (None: none)."""
    require_owner(by, "set up channel accounts")
    ConversationRef(channel, account_id, "-")  # the same rules as every conversation's parts
    agent = None if default_agent is None else await agent_by_name(tx, default_agent)
    agent_id = None if agent is None else agent.id
    found = await tx.channels.account(channel, account_id)
    if found is None:
        return await tx.channels.add_account(channel, account_id, agent_id, clock.now())
    await tx.channels.set_default_agent(found.id, agent_id)
    changed = await tx.channels.account(channel, account_id)
    assert changed is not None
    return changed


MAX_TOKEN = 500


def checked_token(channel: str, token: str) -> str:
    """An account's secret as given at an edge: printable words (a copy-paste's stray
    newlines trimmed), as many as the channel's secret has, one space between them."""
    kind = kind_of(channel)
    if kind is None:
        raise Invalid(f"token: a {channel} account takes no token", field="token")
    words = token.split()
    wanted = max(1, len(kind.secret_prefixes))
    if len(words) != wanted or not all(_printable(w) for w in words):
        raise Invalid(f"token: give {kind.secret}, 1 to {MAX_TOKEN} printable ASCII characters"
                      " each", field="token")  # fmt: skip
    if kind.secret_prefixes and sorted(
        next((p for p in kind.secret_prefixes if w.startswith(p)), "") for w in words
    ) != sorted(kind.secret_prefixes):
        raise Invalid(f"token: give {kind.secret}", field="token")
    return " ".join(sorted(words, key=lambda w: _prefix_rank(kind.secret_prefixes, w)))


def _printable(word: str) -> bool:
    return 1 <= len(word) <= MAX_TOKEN and word.isascii() and word.isprintable()


def _prefix_rank(prefixes: tuple[str, ...], word: str) -> int:
    """Words stored in the order of the kind's prefixes, whatever order they were given in."""
    return next((i for i, p in enumerate(prefixes) if word.startswith(p)), 0)


async def set_token(
    tx: Tx, by: Person, channel: str, account_id: str, token: str | None
) -> ChannelAccount:
    """Set (or, with None, clear) the account's secret; its adapter uses the newest one from
    its next call on."""
    require_owner(by, "set channel tokens")
    found = await account(tx, channel, account_id)
    await tx.channels.set_token(found.id, None if token is None else checked_token(channel, token))
    kind = kind_of(channel)
    if token is not None and kind is not None and not kind.installed():
        log.error(kind.install_hint())  # said now, not first at the next restart
    return await account(tx, channel, account_id)


async def account(tx: Tx, channel: str, account_id: str) -> ChannelAccount:
    found = await tx.channels.account(channel, account_id)
    if found is None:
        raise NotFound(f"no {channel} account {account_id!r}")
    return found


async def link_identity(
    tx: Tx, clock: Clock, by: Person, channel: str, account_id: str, user_id: str, person: str
) -> None:
    require_owner(by, "link channel users to people")
    ConversationRef(channel, account_id, user_id)  # a user id follows the same rules
    found = await account(tx, channel, account_id)
    linked = await person_by_name(tx, person)
    await tx.channels.link(found.id, user_id, linked.id, clock.now())


async def unlink_identity(tx: Tx, by: Person, channel: str, account_id: str, user_id: str) -> None:
    require_owner(by, "unlink channel users")
    found = await account(tx, channel, account_id)
    if not await tx.channels.unlink(found.id, user_id):
        raise NotFound(f"{channel} user {user_id!r} is not linked on account {account_id!r}")


async def identities(tx: Tx, by: Person, channel: str, account_id: str) -> list[tuple[str, str]]:
    require_owner(by, "read channel identities")
    return await tx.channels.identities((await account(tx, channel, account_id)).id)
