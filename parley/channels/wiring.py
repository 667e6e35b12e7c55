"""The channels' running parts, wired once at start: the adapter registry (the web channel
registered for each of its accounts), the outbox deliverers of channel kinds and of routed
completions, and the spawner of bound threads."""

from __future__ import annotations

from parley.channels.completions import RoutedCompletionDeliverer
from parley.channels.connected import AccountStates
from parley.channels.model import WEB
from parley.channels.outbound import (
    ChannelPost,
    ChannelPostDeliverer,
    ChannelThread,
    ChannelThreadDeliverer,
)
from parley.channels.registry import AdapterRegistry
from parley.channels.threads import ThreadSpawner
from parley.channels.web.adapter import WebChannel
from parley.clock import Clock
from parley.deliveries.deliverers import Deliverers
from parley.deliveries.local import NodeAnswerDeliverer, TaskCompletionDeliverer
from parley.deliveries.model import NodeAnswer, TaskCompletion
from parley.settings import ChannelsSettings
from parley.store import Store


class Channels:
    def __init__(self, store: Store, clock: Clock, settings: ChannelsSettings) -> None:
        self._store, self._clock, self.settings = store, clock, settings
        self.registry = AdapterRegistry()
        self.states = AccountStates(clock)  # what each chat service's account is doing now
        self.registry.register(WEB, WebChannel(store, clock))
        self.threads = ThreadSpawner(store, clock, self._thread_policy)

    def deliverers(self) -> Deliverers:
        store, clock, registry = self._store, self._clock, self.registry
        completions = RoutedCompletionDeliverer(TaskCompletionDeliverer())
        return (
            Deliverers()
            .add_local(TaskCompletion, completions)
            .add_local(NodeAnswer, NodeAnswerDeliverer())
            .add_remote(ChannelPost, ChannelPostDeliverer(store, clock, registry))
            .add_remote(ChannelThread, ChannelThreadDeliverer(store, clock, registry))
        )

    def _thread_policy(self, channel: str) -> tuple[bool, float | None, float | None]:
        bindings = self.settings.of(channel).thread_bindings
        return (
            bindings.spawn_subagent_sessions,
            bindings.idle_timeout_seconds,
            bindings.max_age_seconds,
        )
