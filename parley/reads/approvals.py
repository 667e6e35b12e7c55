"""Reading approvals: what waits for a person's decision."""

from __future__ import annotations

from datetime import datetime

from parley.approvals.model import Approval
from parley.people.model import Person
from parley.reads import cursors
from parley.reads.model import Page
from parley.store import Tx


async def waiting_page(
    tx: Tx, person: Person, now: datetime, limit: int | None = None, before: str | None = None
) -> Page[Approval]:
    """Calls waiting for ``person``'s decision, oldest first (the order they wait in)."""
    window = cursors.window(cursors.APPROVALS, limit, before)
    return cursors.page(cursors.APPROVALS, await tx.approvals.waiting_for(person, now, window))
