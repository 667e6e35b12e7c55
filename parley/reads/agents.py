"""Reading agents, their memory, their warnings and their changes: every person reads them."""

from __future__ import annotations

from collections.abc import Sequence

from parley.agents.lookup import agent_by_name
from parley.agents.model import Agent, AgentWarning, Lifecycle, MemoryNote, SettingChange
from parley.reads import cursors
from parley.reads.model import Page
from parley.store import Tx


async def agents_page(
    tx: Tx,
    lifecycle: Sequence[Lifecycle] | None = None,
    limit: int | None = None,
    before: str | None = None,
) -> Page[Agent]:
    """Agents by name (node sessions and retired agents included), or those in ``lifecycle``."""
    window = cursors.window(cursors.AGENTS, limit, before)
    return cursors.page(cursors.AGENTS, await tx.agents.page(window, lifecycle))


async def memory_page(
    tx: Tx, agent: str, limit: int | None = None, before: str | None = None
) -> Page[MemoryNote]:
    """An agent's memory, newest first."""
    window = cursors.window(cursors.MEMORY, limit, before)
    found = await agent_by_name(tx, agent)
    return cursors.page(cursors.MEMORY, await tx.agents.memory_page(found.id, window))


async def warnings_page(
    tx: Tx, agent: str, limit: int | None = None, before: str | None = None
) -> Page[AgentWarning]:
    """The warnings an agent was given, newest first."""
    window = cursors.window(cursors.WARNINGS, limit, before)
    found = await agent_by_name(tx, agent)
    return cursors.page(cursors.WARNINGS, await tx.agents.warnings_page(found.id, window))


async def changes_page(
    tx: Tx, agent: str, limit: int | None = None, before: str | None = None
) -> Page[SettingChange]:
    """What owners changed of an agent's settings, newest first."""
    window = cursors.window(cursors.CHANGES, limit, before)
    found = await agent_by_name(tx, agent)
    return cursors.page(cursors.CHANGES, await tx.agent_changes.page(found.id, window))
