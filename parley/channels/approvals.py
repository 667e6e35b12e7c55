"""Approvals as a channel shows them. Where the turn's text came from (or a conversation its
session is bound to), a post asks, with the exact call and how to answer; another says how it
was decided; each posted once, by its approval's id, in the transaction that asked or decided.
So every way of asking or deciding goes through here: ``ask``, ``decide`` and ``time_out``
are those of ``parley/approvals/asking.py`` with the telling.

In the channel itself a person answers ``/approve ID`` or ``/deny ID [why]`` (``command``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import timedelta

from parley.approvals import asking
from parley.approvals.model import Approval
from parley.channels.model import WEB, ConversationRef
from parley.channels.outbound import post_where_run_is
from parley.clock import Clock
from parley.people.model import Person
from parley.runs.model import Run
from parley.store import Tx

# What a post shows of the arguments; the whole is in `parley turns` and the web Turns page.
SHOWN_ARGUMENTS = 1500
_COMMAND = re.compile(r"\s*/(approve|deny)\s+#?(\d{1,18})\b\s*(.*)", re.DOTALL | re.IGNORECASE)


async def ask(
    tx: Tx,
    clock: Clock,
    run: Run,
    tool: str,
    arguments: Mapping[str, object],
    timeout: timedelta,
) -> Approval:
    approval = await asking.ask(tx, clock, run, tool, arguments, timeout)
    await _post(tx, clock, approval, f"approval:{approval.id}", lambda ref: _asking(approval, ref))
    return approval


def _asking(approval: Approval, ref: ConversationRef) -> str:
    """The post that asks: the call, and how to answer where it is read (the web channel's
    conversations take no commands: its people answer on the Turns page)."""
    number = approval.id
    here = (
        "on the Turns page of the web page"
        if ref.channel == WEB
        else f"here with /approve {number} or /deny {number} [why]"
    )
    return (
        f"{approval.agent_name} asks to call {approval.tool} with {shown(approval.arguments)}."
        f" Answer {here}, or with 'parley approve {number}' or 'parley deny {number}';"
        f" 'parley stop {approval.run_id}' stops the turn. Unanswered by"
        f" {approval.deadline:%H:%M:%S} UTC, it is denied."
    )


async def decide(
    tx: Tx,
    clock: Clock,
    person: Person,
    approval_id: int,
    approve: bool,
    reason: str | None = None,
) -> Approval:
    decided = await asking.decide(tx, clock, person, approval_id, approve, reason)
    await _tell_decided(tx, clock, decided)
    return decided


async def time_out(tx: Tx, clock: Clock, approval_id: int) -> Approval:
    decided = await asking.time_out(tx, clock, approval_id)
    await _tell_decided(tx, clock, decided)
    return decided


async def command(tx: Tx, clock: Clock, person: Person, text: str) -> str | None:
    """``/approve ID`` or ``/deny ID [why]`` said in a channel: decided, and the words that say
    so (the post that tells everyone there comes with the decision); None: no such command."""
    matched = _COMMAND.fullmatch(text)
    if matched is None:
        return None
    verb, number, why = matched.groups()
    approve = verb.lower() == "approve"
    reason = None if approve else why.strip() or None
    decided = await decide(tx, clock, person, int(number), approve, reason)
    return f"Approval {decided.id}: {decision(decided)}."


async def _tell_decided(tx: Tx, clock: Clock, approval: Approval) -> None:
    what = f"{approval.tool} for {approval.agent_name}"
    words = f"Approval {approval.id} ({what}): {decision(approval)}."
    await _post(tx, clock, approval, f"approval:{approval.id}:decided", words)


async def _post(
    tx: Tx,
    clock: Clock,
    approval: Approval,
    key: str,
    words: str | Callable[[ConversationRef], str],
) -> None:
    run = await tx.runs.by_id(approval.run_id)
    topic = await tx.topics.by_id(approval.topic_id)
    assert run is not None and topic is not None
    await post_where_run_is(tx, clock, run, topic, key, words, None, "approval", or_bound=True)


def decision(approval: Approval) -> str:
    if approval.is_waiting:
        return "waiting"
    if approval.decided_by is None:
        return "denied: nobody answered in time"
    why = f" ({approval.reason})" if approval.reason else ""
    return f"{approval.state.value} by {approval.decided_by}{why}"


def shown(arguments: str) -> str:
    return arguments if len(arguments) <= SHOWN_ARGUMENTS else arguments[:SHOWN_ARGUMENTS] + "…"
