"""A task that waits for input: its turn asked a person's approval before a tool call. In an A2A
client's context that person is the owner who let the client in, and the client answers for
them: its next message with the task's id says yes or no (and why), decided as a person's
``/approve`` or ``/deny`` in a channel would be, through ``parley/channels/approvals.py``, so
the decision is told wherever approvals are told and recorded with the client's name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from parley.a2a.model import A2AClient
from parley.approvals.model import Approval
from parley.channels import approvals
from parley.channels.approvals import shown
from parley.clock import Clock
from parley.errors import Invalid, NotFound
from parley.store import Tx

_YES = re.compile(r"\s*(yes|y|approve|approved|ok|okay)\s*[.!]?\s*", re.IGNORECASE)
_NO = re.compile(r"\s*(no|n|deny|denied)\b[\s,.:;!-]*(.*)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Answer:
    approve: bool
    why: str | None = None


def question(approval: Approval) -> str:
    """What the client reads: the exact call, and how to answer it."""
    return (
        f"{approval.agent_name} asks to call {approval.tool} with {shown(approval.arguments)}."
        " Answer in this task: 'yes' to let it, or 'no' and why."
        f" Unanswered by {approval.deadline:%Y-%m-%d %H:%M:%S} UTC, it is denied."
    )


def read_answer(text: str, approval: Approval) -> Answer:
    if _YES.fullmatch(text):
        return Answer(approve=True)
    denied = _NO.fullmatch(text)
    if denied:
        return Answer(approve=False, why=denied.group(2).strip() or None)
    raise Invalid(
        f"this task waits for an answer to {approval.agent_name}'s call of {approval.tool}:"
        " send 'yes', or 'no' and why",
        field="message",
    )


async def answer(
    tx: Tx, clock: Clock, client: A2AClient, approval: Approval, text: str
) -> Approval:
    """``text`` from ``client`` decides ``approval``, as the person who let the client in."""
    said = read_answer(text, approval)
    person = await tx.people.by_id(client.created_by_person_id)
    if person is None:  # the person was removed: nobody the client may answer for
        raise NotFound(f"no approval {approval.id} waits for you")
    why = f"answered by A2A client {client.name}" + (f": {said.why}" if said.why else "")
    return await approvals.decide(tx, clock, person, approval.id, said.approve, why)
