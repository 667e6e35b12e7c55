"""Channel adapters and their registry. An adapter is the edge to one channel account (or to
every account of a channel): it posts text to a conversation and makes threads. It says how an
attempt went with the error tree, as every remote deliverer does: ``Unavailable`` (or a timeout,
a dropped connection) is transient and retried; any other ``ParleyError`` is final.

The registry is read at each send, never captured: an account whose adapter was replaced (a new
token, a reconnect) is spoken to through the newest one."""

from __future__ import annotations

from typing import Protocol

from parley.channels.model import ConversationRef
from parley.errors import NotFound


class ChannelAdapter(Protocol):
    async def post(
        self, ref: ConversationRef, text: str, persona: str | None, idempotency_key: str
    ) -> str:
        """Post ``text`` in ``ref`` as ``persona`` (an agent's name; None: Parley itself); the
        posted message's id. The same key on every attempt: a receiver that saw it already
        posts nothing again and answers the same id."""
        ...

    async def create_thread(
        self, parent: ConversationRef, name: str, idempotency_key: str
    ) -> ConversationRef:
        """A new thread under ``parent``; the same key gives back the same thread."""
        ...


class AdapterRegistry:
    """Adapters by (channel, account); an adapter registered for a channel with no account
    speaks for each of its accounts that has none of its own."""

    def __init__(self) -> None:
        self._adapters: dict[tuple[str, str | None], ChannelAdapter] = {}

    def register(
        self, channel: str, adapter: ChannelAdapter, account_id: str | None = None
    ) -> None:
        """Add or replace: the newest adapter of an account is the one used from now on."""
        self._adapters[(channel, account_id)] = adapter

    def speaks_for(self, ref: ConversationRef) -> bool:
        return ref.account in self._adapters or (ref.channel, None) in self._adapters

    def adapter_for(self, ref: ConversationRef) -> ChannelAdapter:
        """NotFound (a final verdict) when no adapter speaks for the conversation's account."""
        found = self._adapters.get(ref.account) or self._adapters.get((ref.channel, None))
        if found is None:
            raise NotFound(f"no {ref.channel} adapter for account {ref.account_id!r}")
        return found
