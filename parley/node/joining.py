"""Starting and stopping a node on a machine of its own: no store, its turns acting through the
hub's HTTP API (the hub's own node starts with the hub, in ``parley/startup.py``)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from parley.brains.cache import BrainCache
from parley.brains.factory import brain_for
from parley.brains.groups import end_leftovers
from parley.brains.keys import model_endpoints
from parley.broker.port import Broker
from parley.clock import Clock, SystemClock
from parley.datafolder import DataFolder
from parley.node.brain_checks import BrainChecks
from parley.node.http_actions import HttpActions
from parley.node.http_approvals import HttpApprovals
from parley.node.keys import NodeKey
from parley.node.runner import NodeRunner
from parley.node.turn_host import TurnHost
from parley.node.workspace_acting import tools_on_this_node
from parley.settings import Settings
from parley.tls import trusted

log = logging.getLogger("parley")

# How long a node waits for the hub's answer to one action of a turn.
HUB_TIMEOUT = 60.0


@asynccontextmanager
async def joining(
    settings: Settings,
    broker: Broker,
    key: NodeKey,
    workspaces: Path,
    hub: httpx.AsyncClient | None = None,
    instance: str | None = None,
    replace: bool = False,
) -> AsyncIterator[NodeRunner]:
    """A node on a machine of its own, with no store: it registers with the hub across
    ``broker`` (signed with ``key``, its credentials'), keeps a heartbeat, makes its agents'
    workspaces under ``workspaces`` and runs their turns here; what a turn does goes to the
    hub's HTTP API under the run's token (with ``hub``, a client the caller owns; else one of
    the node's own). ``instance``: this process's life as the node (one for every try to join);
    ``replace``: take the name from another instance online under it."""
    folder = DataFolder(settings.data_dir)  # where its command brains' process groups are noted
    folder.prepare(default_store=False)
    end_leftovers(folder.brain_groups)  # what a killed life of this node left running
    folder.clear_run_temp()
    async with contextlib.AsyncExitStack() as stack:
        client = hub
        if client is None:
            # One pool for every turn's actions.
            client = httpx.AsyncClient(timeout=HUB_TIMEOUT, verify=trusted())
            stack.push_async_callback(client.aclose)
        turns = TurnHost(
            settings.node_name,
            broker,
            brains_for(settings, SystemClock()),
            lambda token, url: HttpActions(client, url, token),
            lambda token, url: HttpApprovals(client, url, token),
            *tools_on_this_node(settings),
        )
        node = NodeRunner(
            settings.node_name,
            broker,
            key,
            workspaces,
            settings.heartbeat_seconds,
            turns,
            BrainChecks(settings.node_name, broker, settings),
            instance,
            replace,
        )
        stack.push_async_callback(node.stop)  # also after a refused start: it undoes the rest
        await node.start()
        log.info("node %r joined the mesh; workspaces in %s", settings.node_name, workspaces)
        log.info(model_endpoints(settings))
        yield node


def brains_for(settings: Settings, clock: Clock) -> BrainCache:
    """A node's brains, made from their specs as turns ask, kept while used."""
    return BrainCache(
        lambda spec: brain_for(spec, settings),
        clock,
        settings.brain_idle_seconds,
        settings.max_brains,
    )
