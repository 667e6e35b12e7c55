"""How a failure is kept and shown: its reason code first, then what it means; without anything
shaped like a key (a remote receiver's answer may echo a credential), nor a NUL byte, which no
store keeps. One wording for the outbox, the federation sender and every refusal."""

from __future__ import annotations

from parley.errors import ParleyError
from parley.redact import redact
from parley.text import without_nul


def with_code(code: str | None, words: str) -> str:
    """A failure as it is kept and shown: its reason code first, then what it means."""
    if not code or words.startswith(f"{code}:"):
        return words
    return f"{code}: {words}"


def kept(reason: str) -> str:
    """``reason`` as a store keeps it and an owner may read it."""
    return without_nul(redact(reason))


def stored_reason(error: BaseException) -> str:
    """The reason kept for ``error`` (``thread: the topic it answers was closed``)."""
    if isinstance(error, TimeoutError):
        return "timed out"
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    code = error.fields.get("reason") if isinstance(error, ParleyError) else None
    return kept(with_code(code if isinstance(code, str) else None, str(message)))
