"""Picking the agent that receives work. Every path here filters on the lifecycle."""

from __future__ import annotations

from parley.agents.lookup import agent_by_name
from parley.agents.model import HELD_TOPIC_STATES, NEW_TOPIC_STATES, Agent, Lifecycle
from parley.agents.templates import clone
from parley.clock import Clock
from parley.errors import Conflict
from parley.store import Tx

# A surge clone counts as able to take work while its node makes its workspace.
CLONE_STATES = (Lifecycle.HIRED, Lifecycle.ACTIVE)


async def pick_for_new_topic(tx: Tx, clock: Clock, name: str) -> Agent:
    """The agent that takes a new topic (conversation, task) addressed to ``name``.

    A template's work goes to its least loaded clone; when even that clone's queue (its runs
    waiting or running) has reached the template's surge threshold, or there is no clone, a
    clone is hired for it. Draining and
    retired agents take no new topic.
    """
    agent = await tx.agents.receivable(name, NEW_TOPIC_STATES)
    if agent is not None:
        return agent
    addressed = await agent_by_name(tx, name)
    if addressed.is_template and addressed.lifecycle in CLONE_STATES:
        return await _clone_for(tx, clock, addressed)
    raise Conflict(_refusal(addressed), state=addressed.lifecycle.value)


async def pick_for_held_topic(tx: Tx, name: str) -> Agent:
    """The agent that takes more text in a topic it already holds: draining ones still do."""
    agent = await tx.agents.receivable(name, HELD_TOPIC_STATES)
    if agent is not None:
        return agent
    addressed = await agent_by_name(tx, name)
    if addressed.lifecycle is Lifecycle.HIRED:
        return addressed  # its work waits until its node has made its workspace
    raise Conflict(_refusal(addressed), state=addressed.lifecycle.value)


async def _clone_for(tx: Tx, clock: Clock, template: Agent) -> Agent:
    clones = await tx.agents.receivable_clones(template.id, CLONE_STATES)
    threshold = template.surge_threshold or 1
    if clones and await tx.runs.count_open(clones[0].id) < threshold:
        return clones[0]  # the least loaded clone's queue is below the threshold
    hired = await clone(tx, clock, template.name)
    tx.effects.hired.append(hired)
    return hired


def _refusal(agent: Agent) -> str:
    reason = f" ({agent.retired_reason})" if agent.retired_reason else ""
    if agent.lifecycle is Lifecycle.HIRED:
        return f"agent {agent.name} is hired but its node has not made its workspace yet"
    return f"agent {agent.name} is {agent.lifecycle.value}{reason} and takes no new work"
