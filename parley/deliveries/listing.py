"""Reading the delivery queue, for owners: what is pending (with its next attempt), delivered,
or failed for good and why. Newest first, a page at a time, keyed by id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from parley.deliveries.model import Delivery, DeliveryState
from parley.errors import Invalid
from parley.numbers import ascii_number
from parley.people.accounts import require_owner
from parley.people.model import Person
from parley.store import Tx

MAX_PAGE = 1000


@dataclass(frozen=True)
class DeliveryPage:
    items: list[Delivery]
    next: str | None  # pass back as ``before`` for the page after this one


def parse_cursor(before: str | None) -> int | None:
    """A cursor is the id of the last item of the previous page."""
    if before is None:
        return None
    cursor = ascii_number(before)
    if cursor is None:
        raise Invalid(f"before: {before!r} is not a cursor this list gave out", field="before")
    return cursor


async def list_deliveries(
    tx: Tx,
    reader: Person,
    states: Sequence[DeliveryState] = (),
    limit: int = 100,
    before: str | None = None,
) -> DeliveryPage:
    require_owner(reader, "read the deliveries")
    if not 1 <= limit <= MAX_PAGE:
        raise Invalid(f"limit: give 1 to {MAX_PAGE}", field="limit")
    rows = await tx.outbox.listed(states, parse_cursor(before), limit + 1)
    items = rows[:limit]
    return DeliveryPage(items, str(items[-1].id) if len(rows) > limit else None)
