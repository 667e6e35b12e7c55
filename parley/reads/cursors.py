"""Opaque cursors: a list's name and the key its next page starts after, in URL-safe base64.
A cursor is checked before use, so a mangled one or one from another list is a clear 400."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import TypeVar

from parley.errors import Invalid
from parley.numbers import MAX_ID
from parley.reads.model import DEFAULT_LIMIT, MAX_LIMIT, Key, Page, Slice, Window

T = TypeVar("T")


@dataclass(frozen=True)
class Listing:
    """A list of the API: its name (carried in its cursors) and the type of its order key."""

    name: str
    key_type: type[int] | type[str] = int


def window(listing: Listing, limit: int | None = None, before: str | None = None) -> Window:
    """The window a reader asks for, checked: ``limit`` 1 to 500 (default 50), ``before`` a
    cursor this list gave."""
    size = DEFAULT_LIMIT if limit is None else limit
    if not 1 <= size <= MAX_LIMIT:
        raise Invalid(f"limit must be between 1 and {MAX_LIMIT}, not {size}", field="limit")
    return Window(size, None if before is None else _decode(listing, before))


def page(listing: Listing, found: Slice[T]) -> Page[T]:
    return Page(found.items, encode_next(listing, found.next_key))


def encode_next(listing: Listing, next_key: Key | None) -> str | None:
    return None if next_key is None else encode(listing, next_key)


def encode(listing: Listing, key: Key) -> str:
    raw = json.dumps([listing.name, key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(listing: Listing, cursor: str) -> Key:
    refused = Invalid(
        f"before: {cursor[:60]!r} is not a cursor of the {listing.name} list; pass the 'next'"
        " of a page of this list, or leave it out to start at the beginning",
        field="before",
    )
    try:
        decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    # UnicodeDecodeError and JSONDecodeError are ValueErrors; RecursionError: nested too deep
    except (binascii.Error, ValueError, RecursionError):
        raise refused from None
    if not (isinstance(decoded, list) and len(decoded) == 2 and decoded[0] == listing.name):
        raise refused
    key = decoded[1]
    if type(key) is not listing.key_type:  # bool is an int subclass: compare types exactly
        raise refused
    if isinstance(key, int) and not 0 <= key <= MAX_ID:  # no id is past what a store holds
        raise refused
    assert isinstance(key, int | str)
    return key


PEOPLE = Listing("people", str)
NODES = Listing("nodes", str)
AGENTS = Listing("agents", str)
MEMORY = Listing("memory")
WARNINGS = Listing("warnings")
CHANGES = Listing("changes")
CONVERSATIONS = Listing("conversations")
TASKS = Listing("tasks")
AGENT_CONVERSATIONS = Listing("agent-conversations")
RUNS = Listing("runs")
TURNS = Listing("turns")
MESSAGES = Listing("messages")
APPROVALS = Listing("approvals")
