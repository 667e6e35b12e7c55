"""Subjects with wildcards, as NATS reads them: tokens apart by dots, ``*`` standing for any one
token and ``>`` (last) for one or more. The in-process broker matches with these; NATS matches
by itself."""

from __future__ import annotations


def has_wildcards(pattern: str) -> bool:
    return any(token in ("*", ">") for token in pattern.split("."))


def matches(pattern: str, subject: str) -> bool:
    """Whether ``subject`` (no wildcards) is one ``pattern`` stands for."""
    wanted, given = pattern.split("."), subject.split(".")
    for n, token in enumerate(wanted):
        if token == ">":
            return len(given) > n
        if n >= len(given) or token not in ("*", given[n]):
            return False
    return len(given) == len(wanted)


def overlap(first: str, second: str) -> bool:
    """Whether some subject is one both patterns stand for."""
    a, b = first.split("."), second.split(".")
    for n in range(max(len(a), len(b))):
        x = a[n] if n < len(a) else None
        y = b[n] if n < len(b) else None
        if ">" in (x, y):
            return x is not None and y is not None
        if x is None or y is None or ("*" not in (x, y) and x != y):
            return False
    return True
