"""The wire's shapes: the frames of a batch (the batch itself is the API's body, in
``api/schemas/federation.py``) and the verdicts it is answered with. Every model
forbids unknown fields, bounds every size and takes numbers only as numbers (a seq of "2" or
true is malformed); a body that is not a valid batch is refused whole
(nothing applied), a valid batch gets one verdict per frame, in frame order."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from parley.text import MAX_TEXT

# Thread and message IDs: opaque, but printable and short (each side makes its own randomly).
WIRE_ID = {"pattern": "^[A-Za-z0-9_-]{1,64}$", "max_length": 64}
MAX_SEQ = 2**31 - 1  # a store's integer
ROLE = {"pattern": "^(?:[a-z][a-z0-9-]{0,38}[a-z0-9]|[a-z])$", "max_length": 40}  # a name


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextFrame(_Frame):
    type: Literal["text"]
    thread_id: str = Field(**WIRE_ID)  # type: ignore[call-overload]
    seq: int = Field(ge=1, le=MAX_SEQ, strict=True)
    message_id: str = Field(**WIRE_ID)  # type: ignore[call-overload]
    from_role: str = Field(**ROLE)  # type: ignore[call-overload]
    to_role: str = Field(**ROLE)  # type: ignore[call-overload]
    body: str = Field(min_length=1, max_length=MAX_TEXT)


class CloseFrame(_Frame):
    """A side closed its end of a thread (its root was deleted): later text in it is refused."""

    type: Literal["close"]
    thread_id: str = Field(**WIRE_ID)  # type: ignore[call-overload]
    reason: str = Field(max_length=200)


class DroppedFrame(_Frame):
    """A side dropped text of a thread that it had taken (``count`` texts): its connection was
    paused before a turn answered them. The thread goes on; the sender tells its roles."""

    type: Literal["dropped"]
    thread_id: str = Field(**WIRE_ID)  # type: ignore[call-overload]
    count: int = Field(ge=1, le=MAX_SEQ)
    reason: str = Field(max_length=200)


WireFrame = TextFrame | CloseFrame | DroppedFrame
Frame = Annotated[WireFrame, Field(discriminator="type")]


class Verdict(StrEnum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"  # seen before: ``original`` is the verdict it got then
    REJECTED = "rejected"


class FrameVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    message_id: str | None = None  # a text frame's
    thread_id: str | None = None  # a close or dropped frame's
    verdict: Verdict
    original: Verdict | None = None
    reason: str | None = None  # a rejection's (parley.conversations: Refusal)
    detail: str | None = None
    # A text frame from the future (its thread's seq has a gap here): it was not applied, and
    # the thread goes on from this seq, which the sender sends again from.
    expected_seq: int | None = Field(default=None, ge=1, le=MAX_SEQ, strict=True)

    @property
    def gap(self) -> bool:
        """Refused as from the future: not final, the thread is sent again from
        ``expected_seq``."""
        return self.verdict is Verdict.REJECTED and self.expected_seq is not None

    @property
    def final_verdict(self) -> Verdict:
        """What the frame got the first time it arrived."""
        return self.original or self.verdict


class Verdicts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdicts: list[FrameVerdict]
