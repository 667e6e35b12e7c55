"""An agent's memory: timestamped notes that its brain reads. A note is removed by an owner or
by the person who wrote it, and its removal is recorded with the agent's changes (the note's
text as it was), so that what its brain was once given stays on the record."""

from __future__ import annotations

from parley.agents.lookup import agent_by_name
from parley.agents.model import Agent, Lifecycle, MemoryNote
from parley.clock import Clock
from parley.errors import Conflict, Forbidden, Invalid, NotFound
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
    _refuse_retired(agent)
    return await tx.agents.add_memory(agent.id, note, by.id if by else None, clock.now())


async def forget(tx: Tx, clock: Clock, agent_name: str, note_id: int, by: Person) -> MemoryNote:
    """Remove a note from an agent's memory: its next turn is given the rest."""
    agent = await agent_by_name(tx, agent_name)
    note = await tx.agents.memory_note(agent.id, note_id)
    if note is None:
        raise NotFound(f"agent {agent.name} has no memory note {note_id}")
    if not by.is_owner and note.written_by != by.name:
        raise Forbidden("only owners, or the person who wrote it, remove a memory note")
    _refuse_retired(agent)
    await tx.agents.remove_memory(note.id)
    await tx.agent_changes.record(agent.id, [("memory", note.note, None)], by.id, clock.now())
    return note


def _refuse_retired(agent: Agent) -> None:
    if agent.lifecycle is Lifecycle.RETIRED:
        raise Conflict(f"agent {agent.name} is retired; its memory is closed", state="retired")
