"""Text an agent sent that did not reach its recipient is told in the root, where the person
reads: a send refused at once (the connection paused or revoked, its queue full, the root's
hop budget spent) or a frame the peer refused later. Each refusal keeps its reason code beside
its words (``paused: two paused the connection``).

The notice does not start a turn: nothing the agent could do changes the outcome, and a turn
for each refusal could loop. When the root's own agent sent the text, the notice is addressed to
it and becomes part of its next turn there (``claim_notices``), so it learns of it even when
the peer never answers. Whoever waits on the root (``parley say``, ``task create --wait``) is
told as it commits (``effects.refused``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from parley.conversations.hops import HopBudgetSpent, tell_budget_spent
from parley.conversations.model import Topic, TopicKind
from parley.errors import Conflict
from parley.store import Tx

# Topic kinds whose own agent takes the turns in them: a notice there may be addressed to it.
_AGENTS_OWN = (TopicKind.CONVERSATION, TopicKind.TASK)


async def tell_root(
    tx: Tx, now: datetime, topic_id: int, sender_agent_id: int | None, notice: str
) -> None:
    """Post ``notice`` into the root of ``topic_id`` (the topic the refused text was sent
    from, or sent in), addressed to ``sender_agent_id`` if that agent works in the root."""
    topic = await tx.topics.by_id(topic_id)
    if topic is None:
        return
    root = topic if topic.root_id == topic.id else await tx.topics.by_id(topic.root_id)
    if root is None:
        return
    await tx.messages.add(
        root.id, "notice", notice, now, recipient_agent_id=_addressee(root, sender_agent_id)
    )
    tx.effects.refused.append((root.id, notice))


class SendRefused(Conflict):
    """A send refused at once for a reason the root hears of (``code``): the refusing
    transaction is rolled back, and ``tell_refusal`` posts ``notice`` in one of its own."""

    def __init__(
        self, message: str, code: str, topic_id: int, sender_agent_id: int, notice: str
    ) -> None:
        super().__init__(message, reason=code)
        self.topic_id, self.sender_agent_id, self.notice = topic_id, sender_agent_id, notice


Told = SendRefused | HopBudgetSpent  # refusals of an action that the root hears of


def told(error: Exception) -> Told | None:
    return error if isinstance(error, SendRefused | HopBudgetSpent) else None


async def tell_refusal(tx: Tx, now: datetime, refusal: Told) -> None:
    """In a transaction of its own: the one that was refused is rolled back."""
    if isinstance(refusal, HopBudgetSpent):
        await tell_budget_spent(tx, now, refusal)
    else:
        await tell_root(tx, now, refusal.topic_id, refusal.sender_agent_id, refusal.notice)


def _addressee(root: Topic, sender_agent_id: int | None) -> int | None:
    if root.kind in _AGENTS_OWN and root.agent_id == sender_agent_id:
        return sender_agent_id
    return None


async def claim_notices(tx: Tx, runs: Sequence[tuple[int, int, int]]) -> None:
    """Give each starting run (id, agent, topic) the notices addressed to its agent in its
    topic that no turn has had yet: they become part of its input."""
    if runs:
        await tx.messages.claim_notices(runs)
