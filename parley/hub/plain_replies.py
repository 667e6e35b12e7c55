"""Turn endings that only reply in a local agent conversation — two agents answering each other,
most of what a busy hub records — recorded together in a few statements for a whole batch, as
``record_loaded_outcome`` would record each one: the run finishes, and a reply that says
something counts a hop of its origin and waits for the other role's session.

An end is plain only when nothing about it could be refused: it succeeded, defers no action, its
root is open, its text fits and the other role takes text. Every other end, and a batch in which
some origin would pass its hop budget (``BudgetTight``), goes the one-by-one way, where each hop
is counted in turn and the one past the budget is refused."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from parley.agents.model import HELD_TOPIC_STATES, Agent
from parley.clock import Clock
from parley.conversations.model import LOCAL, HopBudget, Topic, TopicKind
from parley.errors import ParleyError
from parley.hub.outcomes import Outcome
from parley.runs.model import Run, RunChange, RunState
from parley.runs.queueing import Waiting, check_text, queue_texts
from parley.store import Tx

Loaded = tuple[Outcome, Run | None, Topic | None]
# A reply alone takes fewer round trips one by one: five against seven on PostgreSQL.
FEWEST_PLAIN = 2


@dataclass(frozen=True)
class PlainReply:
    outcome: Outcome
    run: Run
    topic: Topic
    recipient: Agent | None  # None: an empty reply, which goes nowhere


class BudgetTight(Exception):
    """An origin would pass its hop budget within this batch: the batch is rolled back and
    recorded one by one."""


async def take_plain(tx: Tx, ends: Sequence[Loaded]) -> tuple[list[PlainReply], list[Loaded]]:
    """The plain replies among ``ends``, each once (a copy of an end changes nothing), and the
    rest in their order; all of ``ends`` if fewer than ``FEWEST_PLAIN`` are plain. A run with
    different ends in one batch goes one by one, where the first that ends it wins. Their roots
    are held locked already (the recorder locks the roots of every turn of its batch)."""
    candidates = [
        (outcome, run, topic)
        for outcome, run, topic in ends
        if run is not None and topic is not None and _may_be_plain(outcome, run, topic)
    ]
    if len({outcome.run_id for outcome, _, _ in candidates}) < FEWEST_PLAIN:
        return [], list(ends)  # without looking up the recipients: one by one does
    ends_of: dict[int, list[Outcome]] = {}
    for outcome, _, _ in ends:
        ends_of.setdefault(outcome.run_id, []).append(outcome)
    names = {_other(run, topic) for outcome, run, topic in candidates if outcome.text.strip()}
    recipients = await tx.agents.receivable_named(names, HELD_TOPIC_STATES)
    plain: dict[int, PlainReply] = {}
    rest: list[Loaded] = []
    for outcome, run, topic in ends:
        if outcome.run_id in plain:
            continue
        one_end = all(other == outcome for other in ends_of[outcome.run_id])
        reply = await _plain(tx, outcome, run, topic, recipients) if one_end else None
        if reply is None:
            rest.append((outcome, run, topic))
        else:
            plain[outcome.run_id] = reply
    if len(plain) < FEWEST_PLAIN:
        return [], list(ends)
    return list(plain.values()), rest


async def record_plain(
    tx: Tx, clock: Clock, budget: HopBudget, replies: Sequence[PlainReply]
) -> None:
    """Finish the runs of ``replies`` that are still running, and send what they say."""
    now = clock.now()
    endings = {
        reply.run.id: (reply.outcome.text, reply.outcome.shown_stderr()) for reply in replies
    }
    ended = await tx.runs.finish_many(endings, now)
    replies = [reply for reply in replies if reply.run.id in ended]
    if not replies:
        return
    tx.effects.freed = True
    sends = [(reply, reply.recipient) for reply in replies if reply.recipient is not None]
    counts = Counter(reply.topic.origin_id for reply, _ in sends)
    held = await tx.hops.spend_many(counts, now, now - budget.window)
    if any(hops > budget.hops for hops in held.values()):
        raise BudgetTight
    texts = [
        Waiting(reply.topic.id, recipient, reply.outcome.text,
                author_agent_id=reply.run.agent_id, from_run_id=reply.run.id)
        for reply, recipient in sends
    ]  # fmt: skip
    await queue_texts(tx, now, texts)
    for reply in replies:
        if reply.outcome.brain_session_id is not None:
            session = reply.outcome.brain_session_id
            await tx.runs.update_session(reply.run.session_id, brain_session_id=session)
        tx.effects.changed.append(RunChange(reply.run, RunState.FINISHED, now))


def _may_be_plain(outcome: Outcome, run: Run, topic: Topic) -> bool:
    return (
        outcome.ends(run)
        and run.state is RunState.RUNNING
        and outcome.succeeded
        and not outcome.stopped
        and not outcome.actions
        and not outcome.tool_calls  # kept, and counted as hops, by the general path
        and topic.kind is TopicKind.AGENT_CONVERSATION
        and topic.connection == LOCAL
        and topic.sender_name is not None
    )


async def _plain(
    tx: Tx, outcome: Outcome, run: Run | None, topic: Topic | None, recipients: dict[str, Agent]
) -> PlainReply | None:
    if run is None or topic is None or not _may_be_plain(outcome, run, topic):
        return None
    if not outcome.text.strip():
        return PlainReply(outcome, run, topic, None)
    recipient = recipients.get(_other(run, topic))
    if recipient is None or recipient.name == run.agent_name or not _fits(outcome.text):
        return None
    if await tx.topics.closed_reason_locked(topic.root_id) is not None:
        return None  # refused one by one, saying why
    return PlainReply(outcome, run, topic, recipient)


def _other(run: Run, topic: Topic) -> str:
    other = topic.other_role(run.agent_id)
    assert other is not None, "a run in an agent conversation is one of its two roles"
    return other


def _fits(text: str) -> bool:
    try:
        check_text(text)
    except ParleyError:
        return False
    return True
