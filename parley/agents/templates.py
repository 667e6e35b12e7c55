"""Templates are blueprints: never run, cloned into real agents that carry a lifetime."""

from __future__ import annotations

from datetime import timedelta

from parley.agents.lookup import agent_by_name
from parley.agents.model import Agent, Lifecycle
from parley.agents.tools import stored
from parley.clock import Clock
from parley.errors import Conflict, Invalid
from parley.naming import check_name
from parley.store import Tx


async def clone(
    tx: Tx,
    clock: Clock,
    template_name: str,
    name: str | None = None,
    lifetime: timedelta | None = None,
) -> Agent:
    """Hire a real agent from a template: its engram, brain, node, session cap, tools, MCP
    servers and variables; and a lifetime."""
    template = await agent_by_name(tx, template_name)
    if not template.is_template:
        raise Conflict(f"agent {template.name} is not a template; only templates can be cloned")
    if template.lifecycle not in (Lifecycle.HIRED, Lifecycle.ACTIVE):
        raise Conflict(
            f"template {template.name} is {template.lifecycle.value}; it makes no more clones",
            state=template.lifecycle.value,
        )
    lifetime = lifetime or _template_lifetime(template)
    clone_name = check_name("agent", name) if name else await _next_clone_name(tx, template)
    if await tx.agents.by_name(clone_name) is not None:
        raise Conflict(f"an agent named {clone_name!r} already exists (names are never reused)")
    now = clock.now()
    agent_id = await tx.agents.insert(
        name=clone_name,
        node_id=template.node_id,
        lifecycle=Lifecycle.HIRED.value,
        engram=template.engram,
        brain=template.brain,
        max_sessions=template.max_sessions,
        tools=stored(template.tools),
        ask=stored(template.ask),
        mcp_servers=template.mcp_servers,
        template_id=template.id,
        expires_at=now + lifetime,
        created_at=now,
    )
    variables = await tx.agents.variables([template.id])
    await tx.agents.set_variables(agent_id, variables.get(template.id, []))
    agent = await tx.agents.by_id(agent_id)
    assert agent is not None
    return agent


def _template_lifetime(template: Agent) -> timedelta:
    if template.clone_lifetime_seconds is None:
        raise Invalid(
            f"template {template.name} has no clone lifetime: give one with --lifetime",
            field="lifetime",
        )
    return timedelta(seconds=template.clone_lifetime_seconds)


async def _next_clone_name(tx: Tx, template: Agent) -> str:
    number = await tx.agents.count_clones(template.id) + 1
    while await tx.agents.by_name(name := f"{template.name[:34]}-{number}") is not None:
        number += 1
    return check_name("agent", name)
