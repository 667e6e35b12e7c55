"""Spawn with ``thread``: once the spawn has committed, and only when the requester's channel
allows it (``channels.CHANNEL.thread_bindings.spawn_subagent_sessions``, off by default), a
thread is made under the requester's conversation and bound to the subtask's session, through
the outbox (``channel_thread``). With the setting off, or no requester (a run whose text came
from the CLI), nothing happens: the subtask runs unbound, as before."""

from __future__ import annotations

import logging
from collections.abc import Callable

from parley.channels.model import ref_from_json
from parley.channels.outbound import ChannelPlace, ChannelThread
from parley.channels.router import as_ref
from parley.clock import Clock
from parley.store import Store
from parley.store.effects import Effects

log = logging.getLogger(__name__)

# For a channel, its thread-binding settings: (spawn allowed, idle timeout s, max age s).
ThreadPolicy = Callable[[str], tuple[bool, float | None, float | None]]


class ThreadSpawner:
    def __init__(self, store: Store, clock: Clock, policy: ThreadPolicy) -> None:
        self._store, self._clock, self._policy = store, clock, policy

    async def on_commit(self, effects: Effects) -> None:
        for task_id in effects.threads_asked:
            await self._thread_for(task_id)

    async def _thread_for(self, task_id: int) -> None:
        async with self._store.transaction() as tx:
            task = await tx.topics.by_id(task_id)
            if task is None or task.spawned_by_run_id is None:
                return
            recorded = ref_from_json(await tx.messages.channel_ref_of_run(task.spawned_by_run_id))
            ref = None if recorded is None else as_ref(recorded)
            if ref is None:
                return
            allowed, idle, max_age = self._policy(ref.channel)
            if not allowed:
                return
            item = ChannelThread(
                **ChannelPlace.fields_of(ref),
                task_id=task.id,
                name=f"{task.agent_name}: task {task.id}",
                bound_by=f"run:{task.spawned_by_run_id}",
                idle_timeout_seconds=idle,
                max_age_seconds=max_age,
            )
            if await tx.outbox.put(f"thread:task:{task.id}", item, self._clock.now()):
                tx.effects.outbox = True
