"""The bound delivery router: where a completion goes, chosen before its text is written, as a
pure function of the session's bindings and the requester (the channel conversation the person
who set the work off was in). A completion whose session has an active binding goes there and
only there; every fallback says why, so that it is recorded and shown, never a hidden reroute.

Rules, in order, over the target session's active bindings:
1. none → fallback ``no-active-binding``;
2. no requester → fail closed: fallback ``missing-requester``; else the single binding
   (``single-binding``) or fallback ``ambiguous-without-requester``;
3. a requester that is not a conversation → fallback ``invalid-requester``;
4. the binding of the requester's own conversation (``exact-conversation``);
5. the single thread under the requester's conversation, or else the single binding on the
   requester's channel account (``requester-thread``, ``requester-account``);
6. otherwise fallback ``no-requester-match``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from parley.channels.model import ConversationRef, SessionBindingRecord
from parley.errors import Invalid

TASK_COMPLETION = "task_completion"  # the only event kind routed here in this iteration


class DeliveryMode(StrEnum):
    BOUND = "bound"
    FALLBACK = "fallback"


@dataclass(frozen=True)
class Destination:
    binding: SessionBindingRecord | None
    mode: DeliveryMode
    reason: str


Requester = ConversationRef | Mapping[str, object] | None


def resolve_destination(
    event_kind: str,
    target_session_key: str,
    requester: Requester,
    fail_closed: bool,
    bindings: Sequence[SessionBindingRecord],
) -> Destination:
    """Where ``event_kind`` for ``target_session_key`` goes, given the bindings known."""
    if event_kind != TASK_COMPLETION:
        raise ValueError(f"only {TASK_COMPLETION} is routed by bindings, not {event_kind!r}")
    active = sorted(
        (b for b in bindings if b.is_active and b.target_session_key == target_session_key),
        key=lambda b: b.binding_id,
    )
    if not active:
        return _fallback("no-active-binding")
    if requester is None:
        if fail_closed:
            return _fallback("missing-requester")
        if len(active) == 1:
            return _bound(active[0], "single-binding")
        return _fallback("ambiguous-without-requester")
    ref = as_ref(requester)
    if ref is None:
        return _fallback("invalid-requester")
    return _by_requester(active, ref)


def _by_requester(active: list[SessionBindingRecord], ref: ConversationRef) -> Destination:
    for binding in active:
        if binding.conversation.same_conversation(ref):
            return _bound(binding, "exact-conversation")
    on_account = [b for b in active if b.conversation.account == ref.account]
    under = [b for b in on_account if b.conversation.parent_conversation_id == ref.conversation_id]
    if len(under) == 1:
        return _bound(under[0], "requester-thread")
    if len(on_account) == 1:
        return _bound(on_account[0], "requester-account")
    return _fallback("no-requester-match")


def as_ref(requester: ConversationRef | Mapping[str, object]) -> ConversationRef | None:
    """A requester as recorded may be anything (a stored value from an older version, a
    channel's malformed metadata): what is not a whole conversation is no requester."""
    if isinstance(requester, ConversationRef):
        return requester
    parent = requester.get("parent_conversation_id")
    try:
        return ConversationRef(
            channel=_text(requester.get("channel")),
            account_id=_text(requester.get("account_id")),
            conversation_id=_text(requester.get("conversation_id")),
            parent_conversation_id=None if parent is None else _text(parent),
        )
    except Invalid:
        return None


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise Invalid("not a text")
    return value


def _bound(binding: SessionBindingRecord, reason: str) -> Destination:
    return Destination(binding, DeliveryMode.BOUND, reason)


def _fallback(reason: str) -> Destination:
    return Destination(None, DeliveryMode.FALLBACK, reason)
