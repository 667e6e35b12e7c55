"""A channel adapter of the registry's protocol that records what it is asked to post and the
threads it makes, and that can be told to fail transiently or for good: a fake of a remote
channel (an adapter is an edge), not a mock of Parley's internals. Like a real receiver, it
posts a key it has seen once only."""

from __future__ import annotations

from dataclasses import dataclass, field

from parley.channels.model import ConversationRef
from parley.errors import Forbidden, Unavailable


@dataclass(frozen=True)
class Posted:
    ref: ConversationRef
    text: str
    persona: str | None
    key: str


@dataclass
class RecordingAdapter:
    channel: str = "test"
    posts: list[Posted] = field(default_factory=list)
    threads: dict[str, ConversationRef] = field(default_factory=dict)
    attempts: int = 0
    # What the next attempts do: "transient" (Unavailable) or "permanent" (Forbidden), in order.
    failures: list[str] = field(default_factory=list)

    def _maybe_fail(self) -> None:
        self.attempts += 1
        if self.failures:
            kind = self.failures.pop(0)
            if kind == "transient":
                raise Unavailable("the channel is away for a moment")
            raise Forbidden("missing permissions to post here")

    async def post(
        self, ref: ConversationRef, text: str, persona: str | None, idempotency_key: str
    ) -> str:
        self._maybe_fail()
        if all(posted.key != idempotency_key for posted in self.posts):
            self.posts.append(Posted(ref, text, persona, idempotency_key))
        return idempotency_key

    async def create_thread(
        self, parent: ConversationRef, name: str, idempotency_key: str
    ) -> ConversationRef:
        self._maybe_fail()
        if idempotency_key not in self.threads:
            number = len(self.threads) + 1
            self.threads[idempotency_key] = ConversationRef(
                parent.channel, parent.account_id, f"thread-{number}", parent.conversation_id
            )
        return self.threads[idempotency_key]

    def posted_to(self, conversation_id: str) -> list[Posted]:
        return [posted for posted in self.posts if posted.ref.conversation_id == conversation_id]
