"""Picking the agent that receives work. Every path here filters on the lifecycle."""

from __future__ import annotations

from parley.agents.lookup import agent_by_name
from parley.agents.model import HELD_TOPIC_STATES, NEW_TOPIC_STATES, Agent
from parley.errors import Conflict, Unavailable
from parley.store import Tx


async def pick_for_new_topic(tx: Tx, name: str) -> Agent:
    """The agent that takes a new topic (conversation, task) addressed to ``name``.

    A template's work goes to its least loaded active clone. Draining and retired agents take
    no new topic.
    """
    agent = await tx.agents.receivable(name, NEW_TOPIC_STATES)
    if agent is not None:
        return agent
    addressed = await agent_by_name(tx, name)
    if addressed.is_template:
        clones = await tx.agents.receivable_clones(addressed.id, NEW_TOPIC_STATES)
        if clones:
            return clones[0]
        raise Unavailable(f"template {name} has no active clone to take this work", agent=name)
    raise Conflict(_refusal(addressed), state=addressed.lifecycle.value)


async def pick_for_held_topic(tx: Tx, name: str) -> Agent:
    """The agent that takes more text in a topic it already holds: draining ones still do."""
    agent = await tx.agents.receivable(name, HELD_TOPIC_STATES)
    if agent is not None:
        return agent
    addressed = await agent_by_name(tx, name)
    raise Conflict(_refusal(addressed), state=addressed.lifecycle.value)


def _refusal(agent: Agent) -> str:
    reason = f" ({agent.retired_reason})" if agent.retired_reason else ""
    return f"agent {agent.name} is {agent.lifecycle.value}{reason} and takes no new work"
