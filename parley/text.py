"""Text Parley keeps: one rule for a NUL byte, used at every edge. PostgreSQL cannot hold one in
text (and SQLite would keep it where nothing downstream expects it), so text with a NUL is
refused where a caller gives it, naming where it was, and dropped where a brain produced it."""

from __future__ import annotations

from parley.errors import Invalid

NUL = "\x00"

# How long each kind of text may be, in characters; the API's schema and README say the same.
MAX_TEXT = 100_000  # a message, a task, a subtask, a report, an answer, a task's result
MAX_NOTE = 20_000  # a memory note, written by a person or by a run alike
MAX_ENGRAM = 20_000  # an agent's or a node's engram
MAX_REASON = 2_000  # why an agent is warned or retired


def check_length(value: str, cap: int, what: str, *, may_be_empty: bool = False) -> str:
    """``value`` if it is at most ``cap`` characters (and not blank, unless it may be)."""
    if not may_be_empty and not value.strip():
        raise Invalid(f"the {what} is empty", field=what)
    if len(value) > cap:
        raise Invalid(f"the {what} is longer than {cap} characters ({len(value)})", field=what)
    return value


def refuse_nul(value: str, where: str) -> str:
    """``value`` unchanged, or Invalid naming ``where`` (a field, a parameter) if it holds a NUL."""
    if NUL in value:
        raise Invalid(
            f"{where} contains a NUL byte (\\x00); Parley keeps no text with one", field=where
        )
    return value


def refuse_nul_within(data: object, where: str = "") -> None:
    """As ``refuse_nul`` for every string in a JSON-like value, keys included, each named by its
    path (``text``, ``items[2].note``)."""
    if isinstance(data, str):
        refuse_nul(data, where or "the text")
    elif isinstance(data, dict):
        for key, value in data.items():
            inner = f"{where}.{key}" if where else str(key)
            refuse_nul_within(key, f"a field name in {where or 'the body'}")
            refuse_nul_within(value, inner)
    elif isinstance(data, list | tuple):
        for index, value in enumerate(data):
            refuse_nul_within(value, f"{where}[{index}]")


def without_nul(value: str) -> str:
    """``value`` with any NUL byte dropped: for what a brain wrote, which nobody can resend."""
    return value.replace(NUL, "") if NUL in value else value
