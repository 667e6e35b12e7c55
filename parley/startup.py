"""Starting and stopping the running parts of one installation, in order."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from parley.agents.sweeper import AgentSweeper
from parley.agents.workspaces import provision_waiting
from parley.brains.groups import end_leftovers
from parley.brains.keys import model_endpoints
from parley.broker.local import LocalBroker
from parley.broker.port import Broker
from parley.channels.connected import AccountConnection, ConnectedAccounts
from parley.channels.kinds import KINDS, ChannelKind
from parley.channels.registry import ChannelAdapter
from parley.channels.sweeper import BindingSweeper
from parley.clock import Clock
from parley.context import Context
from parley.conversations.model import HopBudget
from parley.datafolder import DataFolder
from parley.errors import ParleyError
from parley.hub.approvals import LocalApprovals
from parley.hub.local_actions import LocalActions
from parley.hub.node_loss import failing_lost_turns
from parley.hub.runtime import Runtime
from parley.mesh.claims import Holder
from parley.mesh.credentials import broker_revoker, tell_broker
from parley.mesh.registry import MeshRegistry
from parley.node.brain_checks import BrainChecks
from parley.node.joining import brains_for
from parley.node.keys import NodeKey
from parley.node.runner import NodeRunner, new_instance
from parley.node.turn_host import TurnHost
from parley.node.workspace_acting import tools_on_this_node
from parley.people.bootstrap import ensure_owner, owner_token_path
from parley.settings import ServiceSettings, Settings
from parley.store import Store

if TYPE_CHECKING:
    from parley.a2a.pushes import PushNotices

log = logging.getLogger("parley")


# a2a-sdk's OpenTelemetry switch. Off unless ``telemetry``: its spans around each step of every
# A2A call went nowhere in a Parley that sets up no exporter (app.py says what they cost). It
# reads the switch once, when its tracing is first imported (lazily, at the first A2A call this
# process serves or makes), so the switch is set before anything starts.
A2A_SDK_SWITCH = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"


def a2a_sdk_telemetry(enabled: bool) -> None:
    """a2a-sdk's spans on or off as ``enabled`` says, unless the environment set its switch."""
    os.environ.setdefault(A2A_SDK_SWITCH, "true" if enabled else "false")


@asynccontextmanager
async def running(
    settings: Settings,
    clock: Clock,
    mesh: Broker | None = None,
    channels: Mapping[str, ChannelAdapter] | None = None,
) -> AsyncIterator[Context]:
    """Data folder, store (migrated), owner, broker, hub registry, the local node, the sweeper.
    ``mesh``: a broker to other machines, which the caller opened and closes; else the
    in-process one. ``channels``: adapters of more channels (by name, for every account).
    Every channel's adapters are registered before deliveries start: a post left pending by
    the last stop, due at once, would otherwise fail for good as having no adapter."""
    a2a_sdk_telemetry(settings.telemetry)  # before anything may load a2a-sdk's tracing
    folder = DataFolder(settings.data_dir)
    folder.prepare(default_store=settings.database_url is None)
    store = await Store.open(settings.resolved_database_url, direct_driver=settings.direct_driver)
    broker: Broker = mesh or LocalBroker()
    runtime = Runtime(
        store,
        broker,
        clock,
        settings.base_url,
        hop_budget(settings),
        settings.federation_send_frames,
        settings.channels,
        settings.federation_send_batches,
        timedelta(seconds=settings.a2a_task_timeout_seconds),
    )
    own_node = settings.node_name if settings.local_node else None
    own_instance = new_instance()  # no other process takes the hub's own node's name
    own_key = NodeKey.generated()  # the hub's own node signs its registration with it
    registry = _registry(settings, store, broker, clock, runtime, own_instance, own_key)
    context = Context(
        settings=settings,
        store=store,
        broker=broker,
        clock=clock,
        runtime=runtime,
        registry=registry,
    )
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(store.close)
        if mesh is None:
            stack.push_async_callback(broker.close)
        await _announce_owner(context)
        await _tell_broker_revoked(settings, store)
        await registry.start()
        stack.push_async_callback(registry.stop)
        end_leftovers(folder.brain_groups)  # before their runs are recovered and run again
        folder.clear_run_temp()
        for name, adapter in (channels or {}).items():
            runtime.channels.registry.register(name, adapter)
        await _start_channels(stack, context)
        pushes = _a2a_pushes(stack, context)
        await runtime.start()
        stack.push_async_callback(runtime.stop)
        await pushes.start()
        stack.push_async_callback(pushes.stop)
        if settings.local_node:
            node = _local_node(settings, context, own_key, folder.workspaces, own_instance)
            await node.start()
            stack.push_async_callback(node.stop)
        for sweeper in (AgentSweeper, BindingSweeper):
            sweeping = sweeper(store, clock, settings.sweep_seconds)
            await sweeping.start()
            stack.push_async_callback(sweeping.stop)
        log.info(
            "Parley is up: store %s, broker %s, %s",
            store.dialect,
            broker.state().url or "in process",
            f"node {own_node!r}" if own_node else "no node of its own",
        )
        log.info(model_endpoints(settings))
        yield context


def _a2a_pushes(stack: contextlib.AsyncExitStack, context: Context) -> PushNotices:
    """A2A push notices: their deliverer registered before deliveries start (one left pending
    by the last stop is due at once), their queue subscribed to the store's commits. Imported
    here, by the hub alone: a joining node has no use for a2a-sdk's half second of imports."""
    from parley.a2a.pushes import PushNotice, PushNotices, PushSender

    sender = PushSender(context.settings.push_allowed_hosts)
    context.runtime.deliverers.add_remote(PushNotice, sender)
    stack.push_async_callback(sender.close)
    pushes = PushNotices(context.store, context.clock)
    stack.callback(context.store.subscribe(pushes.on_commit))
    return pushes


def _registry(
    settings: Settings,
    store: Store,
    broker: Broker,
    clock: Clock,
    runtime: Runtime,
    own_instance: str,
    own_key: NodeKey,
) -> MeshRegistry:
    async def on_node_ready(node: str) -> None:
        await provision_waiting(store, broker, node)
        runtime.scheduler.node_back(node)  # a lost node that registers again is back

    scheduler = runtime.scheduler
    own_node = settings.node_name if settings.local_node else None
    return MeshRegistry(
        store,
        broker,
        clock,
        on_node_ready,
        timedelta(seconds=settings.node_offline_after_seconds),
        failing_lost_turns(store, clock, scheduler, own_node=own_node),
        scheduler.node_back,
        None if own_node is None else Holder(own_node, own_instance),
        own_key.public_key,
    )


async def _tell_broker_revoked(settings: Settings, store: Store) -> None:
    """The broker's list of revoked node keys made whole again at each start (a revocation
    whose telling failed, a broker whose resolver lost it)."""
    try:
        await tell_broker(store, broker_revoker(settings))
    except ParleyError as exc:
        log.warning("the broker was not told the revoked node credentials: %s", exc.message)


def _local_node(
    settings: Settings, context: Context, key: NodeKey, workspaces: Path, instance: str
) -> NodeRunner:
    """The hub's own node: its turns act on the store directly."""
    store, clock, runtime = context.store, context.clock, context.runtime
    approval_timeout = timedelta(seconds=settings.approval_timeout_seconds)
    turns = TurnHost(
        settings.node_name,
        context.broker,
        brains_for(settings, clock),
        lambda token, _url: LocalActions(store, clock, token, runtime.budget),
        lambda token, _url: LocalApprovals(store, clock, runtime.watch, token, approval_timeout),
        *tools_on_this_node(settings),
    )
    return NodeRunner(
        settings.node_name,
        context.broker,
        key,
        workspaces,
        settings.heartbeat_seconds,
        turns,
        BrainChecks(settings.node_name, context.broker, settings),
        instance,
    )


def hop_budget(settings: Settings) -> HopBudget:
    window = timedelta(seconds=settings.hop_window_seconds)
    return HopBudget(settings.hop_budget, window, settings.federation_queue_limit)


async def _announce_owner(context: Context) -> None:
    settings = context.settings
    saved = await ensure_owner(context.store, context.clock, settings.data_dir, settings.owner_name)
    if saved is not None:
        log.info(
            "first start: owner %r created; API token saved in %s; sign in with it on the"
            " page at %s/",
            settings.owner_name,
            saved,
            settings.base_url,
        )
    else:
        log.info(
            "owner token (if this machine made it) is in %s", owner_token_path(settings.data_dir)
        )


async def _start_channels(stack: contextlib.AsyncExitStack, context: Context) -> None:
    """Each chat service's accounts given a token, kept connected, for each service whose
    library is installed (an optional extra: without it, its accounts with a token get a
    one-line hint in the log)."""
    async with context.store.transaction() as tx:
        accounts = await tx.channels.accounts()
    for kind in KINDS.values():
        if not kind.installed():
            if any(a.channel == kind.name and a.has_token for a in accounts):
                log.error(kind.install_hint())
            continue
        service = _service_of(kind, context)
        await service.start_configured(accounts)  # each account's adapter registered now
        await service.start()
        stack.push_async_callback(service.stop)


def _service_of(kind: ChannelKind, context: Context) -> ConnectedAccounts:
    settings: ServiceSettings = getattr(context.settings.channels, kind.name)
    connect = _connect_when_needed(kind, context, settings)
    registry = context.runtime.channels.registry
    return ConnectedAccounts(
        kind.name, context.store, registry, connect, settings.accounts_poll_seconds
    )


def _connect_when_needed(
    kind: ChannelKind, context: Context, settings: ServiceSettings
) -> Callable[[str], AccountConnection]:
    """What connects one account of ``kind``. The optional library's edge, its package, is
    imported when the first account connects: a server with no account there does not load
    the library at every start (0.03 to 0.2 s of CPU each, 0.4 s for the four). An account
    added while the server runs loads it then, once."""
    connector: Callable[[str], AccountConnection] | None = None

    def connect(account_id: str) -> AccountConnection:
        nonlocal connector
        if connector is None:
            module = importlib.import_module(f"parley.channels.{kind.name}.service")
            states = context.runtime.channels.states
            connector = module.connector(context.store, context.clock, settings, states)
        return connector(account_id)

    return connect
