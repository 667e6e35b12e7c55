"""The verdicts a receiver answers a text frame with: accepted, refused with the wire's reason,
or a duplicate of the one it got when it first came."""

from __future__ import annotations

from typing import Any

from parley.conversations.agent_conversations import TextRefused
from parley.conversations.peer_conversations import NotApplied, SeqAhead
from parley.federation.frames import FrameVerdict, TextFrame, Verdict


def accepted(frame: TextFrame) -> FrameVerdict:
    return FrameVerdict(message_id=frame.message_id, verdict=Verdict.ACCEPTED)


def refused(frame: TextFrame, refusal: TextRefused) -> FrameVerdict:
    return FrameVerdict(
        message_id=frame.message_id,
        verdict=Verdict.REJECTED,
        reason=refusal.reason.value,
        detail=refusal.message,
    )


def not_applied(frame: TextFrame, refusal: NotApplied) -> FrameVerdict:
    """Refused and not kept; one from the future says the seq its thread goes on from."""
    verdict = refused(frame, refusal)
    if isinstance(refusal, SeqAhead):
        return verdict.model_copy(update={"expected_seq": refusal.expected})
    return verdict


def duplicate_of(frame: TextFrame, seen: Any) -> FrameVerdict:
    """``frame`` seen before: the verdict kept for it (``seen``: verdict, reason, detail)."""
    return FrameVerdict(
        message_id=frame.message_id,
        verdict=Verdict.DUPLICATE,
        original=Verdict(seen.verdict),
        reason=seen.reason,
        detail=seen.detail,
    )


def kept(verdict: FrameVerdict) -> tuple[str, str, str | None, str | None]:
    """What the store keeps of a verdict for dedup: (message_id, verdict, reason, detail)."""
    assert verdict.message_id is not None
    return verdict.message_id, verdict.verdict.value, verdict.reason, verdict.detail
