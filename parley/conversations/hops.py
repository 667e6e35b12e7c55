"""Hops: what a run sets off for its root (a send, a subtask, a question to a node), each of
which may start new runs. Two agents answering each other would hop for ever:

- A run acts under its root's lock, having read its own state once it held it (the outcome
  recorder for a batch of turns, which locks the roots of all of them first;
  ``acting_under_root`` for a single action): a stop of the root takes the same lock, so it
  either sees what the run set off or the run sees it was stopped.
- Every hop then passes ``pass_hop``: the root is open, and the origin (the root at the top,
  through subtasks) has budget left: at most ``HopBudget.hops`` in a window. Past it the hop
  fails with ``HopBudgetSpent`` and the origin is told, once per window, that its agents were
  stopped from going on.

Lock order: roots first, then the origin's counter, so that hops of one origin never wait for
each other in a circle.
"""

from __future__ import annotations

from datetime import datetime

from parley.conversations.model import HopBudget, Topic
from parley.durations import format_duration
from parley.errors import Conflict, Unauthorized
from parley.runs.model import Run, RunState
from parley.store import Tx


class HopBudgetSpent(Conflict):
    """The origin's hop budget is spent: nothing more is set off for it until its window ends."""

    def __init__(self, origin_id: int, budget: HopBudget) -> None:
        super().__init__(
            f"the hop budget of topic {origin_id} is spent: {_budget_in_words(budget)}"
            " (settings hop_budget, hop_window_seconds); nothing more is set off for it until"
            " its window ends",
            reason="hop_budget",
            topic_id=origin_id,
        )
        self.origin_id = origin_id
        self.budget = budget


async def acting_under_root(tx: Tx, run: Run, topic: Topic) -> None:
    """Lock the root of ``run`` (working in ``topic``) and make sure it still runs: read before
    the lock, a stop committed meanwhile would go unseen."""
    await tx.topics.lock([topic.root_id])
    if await tx.runs.state_of(run.id) is not RunState.RUNNING:
        raise Unauthorized("this run token belongs to no running turn (it ended or was stopped)")


async def pass_hop(tx: Tx, now: datetime, budget: HopBudget, topic: Topic) -> None:
    """Let a run working in ``topic`` set off one more thing, or refuse with a Conflict. The
    run acts under its root's lock already (see above); the origin's counter stays locked until
    commit."""
    closed = await tx.topics.closed_reason_locked(topic.root_id)
    if closed is not None:
        raise Conflict(f"the topic this run answers for was closed ({closed})", reason="thread")
    if await tx.hops.spend(topic.origin_id, now, now - budget.window) > budget.hops:
        raise HopBudgetSpent(topic.origin_id, budget)


async def tell_budget_spent(tx: Tx, now: datetime, spent: HopBudgetSpent) -> None:
    """Post the notice into the origin, once per window. In a transaction of its own: the one
    that was refused is rolled back."""
    if await tx.hops.mark_noticed(spent.origin_id, now):
        notice = (
            "The agents working for this were stopped from going on: they used its hop budget"
            f" of {_budget_in_words(spent.budget)} (settings hop_budget, hop_window_seconds)."
            " Until that window ends, whatever they try to set off for it fails."
        )
        await tx.messages.add(spent.origin_id, "notice", notice, now)
        tx.effects.refused.append((spent.origin_id, notice))


def _budget_in_words(budget: HopBudget) -> str:
    window = format_duration(max(1, round(budget.window.total_seconds())))
    return f"{budget.hops} sends, subtasks and node questions in {window}"
