"""Workspaces are made by the agent's node, asked across the broker; then the agent is active."""

from __future__ import annotations

import logging

from parley.agents.lifecycle import activate
from parley.agents.model import Agent, Lifecycle
from parley.broker.port import Broker
from parley.errors import Conflict, ParleyError
from parley.node.messages import Provision, ProvisionReply, provision_subject
from parley.store import Store, Tx

log = logging.getLogger(__name__)

PROVISION_TIMEOUT = 10.0


async def provision(store: Store, broker: Broker, agent: Agent) -> bool:
    """Ask the agent's node for its workspace. False (and the agent stays as it is) if the node
    cannot be reached; it is asked again when the node registers."""
    request = Provision(agent=agent.name).model_dump_json().encode()
    try:
        raw = await broker.request(provision_subject(agent.node_name), request, PROVISION_TIMEOUT)
        workspace = ProvisionReply.model_validate_json(raw).workspace
    except (ParleyError, ValueError) as exc:
        log.warning("workspace of %s not made on node %s: %s", agent.name, agent.node_name, exc)
        return False
    async with store.transaction() as tx:
        current = await tx.agents.by_id(agent.id)
        if current is None or current.node_id != agent.node_id:
            return False  # reassigned meanwhile; the new node is asked separately
        await tx.agents.set_workspace(agent.id, workspace)
        tx.effects.wake = True  # its queued text (moved with it by a reassign) may start now
        if current.lifecycle is Lifecycle.HIRED:
            await _activate_unless_done(tx, current)
    return True


async def _activate_unless_done(tx: Tx, agent: Agent) -> None:
    """hired → active. A hire provisions the workspace itself and the runtime does too, on its
    commit: on PostgreSQL both may read the agent hired, and the second finds it active. That
    is done, not a conflict (the hire was answered 409 though it had succeeded)."""
    try:
        await activate(tx, agent)
    except Conflict as refused:
        if refused.fields.get("state") != Lifecycle.ACTIVE.value:
            raise


async def provision_waiting(store: Store, broker: Broker, node_name: str) -> None:
    """Make the workspaces that were asked for while ``node_name`` was away."""
    async with store.transaction() as tx:
        node = await tx.nodes.by_name(node_name)
        waiting = await tx.agents.awaiting_workspace(node.id) if node else []
    for agent in waiting:
        await provision(store, broker, agent)
