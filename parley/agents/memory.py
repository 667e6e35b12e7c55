"""An agent's memory: append-only, timestamped notes that its brain reads."""

from __future__ import annotations

from parley.agents.lookup import agent_by_name
from parley.agents.model import Lifecycle, MemoryNote
from parley.clock import Clock
from parley.errors import Conflict, Invalid
from parley.people.model import Person
from parley.store import Tx
from parley.text import MAX_NOTE, refuse_nul


def check_note(note: str) -> str:
    """A note, whether a person or a run writes it: 1 to MAX_NOTE characters, no NUL."""
    note = note.strip()
    if not note or len(note) > MAX_NOTE:
        raise Invalid(f"a memory note holds 1 to {MAX_NOTE} characters", field="note")
    return refuse_nul(note, "note")


async def remember(
    tx: Tx, clock: Clock, agent_name: str, note: str, by: Person | None
) -> MemoryNote:
    note = check_note(note)
    agent = await agent_by_name(tx, agent_name)
    if agent.lifecycle is Lifecycle.RETIRED:
        raise Conflict(f"agent {agent.name} is retired; its memory is closed", state="retired")
    return await tx.agents.add_memory(agent.id, note, by.id if by else None, clock.now())
