"""What a name may be: the same rule for people, nodes and agents, checked at every edge."""

from __future__ import annotations

import re

from parley.errors import Invalid

# Matched whole (``fullmatch``): ``$`` alone would let a trailing newline through.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9-]{0,38}[a-z0-9]|[a-z]")
NAME_RULE = (
    "1 to 40 lowercase letters, digits or hyphens, starting with a letter and not ending with"
    " a hyphen"
)


def is_name(value: object) -> bool:
    return isinstance(value, str) and NAME_PATTERN.fullmatch(value) is not None


def check_name(kind: str, value: str) -> str:
    """Return ``value`` if it is a valid name for a ``kind`` (person, node, agent), else Invalid."""
    if not is_name(value):
        raise Invalid(f"{kind} name {value!r} is invalid: use {NAME_RULE}", field="name")
    return value
