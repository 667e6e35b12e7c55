"""The hub's running parts for runs, wired once at start: the scheduler, the outbox worker (with
the channels' deliverers), the federation sender, the channels' thread spawner, run watching,
task waiting, the run log, the stop sender and the provisioner each subscribe to the store's
commits, so that whatever a transaction sets in motion is acted on however it was opened."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

from parley.agents.model import Agent
from parley.agents.workspaces import provision
from parley.broker.port import Broker
from parley.channels.wiring import Channels
from parley.clock import Clock
from parley.conversations.model import HopBudget
from parley.errors import ParleyError
from parley.federation.a2a_agents import A2AAgents
from parley.federation.a2a_peer import A2APeer
from parley.federation.a2a_replies import Intake
from parley.federation.a2a_tasks import RemoteTasks
from parley.federation.backlogs import Backlogs
from parley.federation.failures import FrameFate
from parley.federation.known_peers import KnownPeers
from parley.federation.model import FRAME_KIND
from parley.federation.peer_client import PeerClient
from parley.federation.sender import FederationSender
from parley.hub.outbox import OutboxWorker
from parley.hub.reconciliation import reconcile
from parley.hub.run_log import log_run_changes
from parley.hub.scheduler import Scheduler
from parley.hub.topic_watch import TopicWatch
from parley.hub.watch import RunWatch
from parley.node.messages import StopTurn, stop_subject
from parley.settings import ChannelsSettings
from parley.store import Store
from parley.store.effects import Effects

log = logging.getLogger(__name__)


class Runtime:
    def __init__(
        self,
        store: Store,
        broker: Broker,
        clock: Clock,
        parley_url: str,
        budget: HopBudget,
        send_frames: int = 500,
        channels: ChannelsSettings | None = None,
        send_batches: int = 1,
        a2a_task_timeout: timedelta = timedelta(minutes=10),
    ) -> None:
        self.store, self.broker, self.clock = store, broker, clock
        self.budget = budget  # what runs may set off per origin (the hop_budget settings)
        self.watch = RunWatch()
        self.topic_watch = TopicWatch()
        self.scheduler = Scheduler(store, broker, clock, parley_url, self.watch, budget)
        self.channels = Channels(store, clock, channels or ChannelsSettings())
        # One registry of delivery kinds: the channels' and federation's frames.
        self.deliverers = self.channels.deliverers().add_own(FRAME_KIND, FrameFate())
        self.outbox = OutboxWorker(store, clock, self.deliverers)
        self.peers = PeerClient()  # the one HTTP client to peer installations
        self.known_peers = KnownPeers()  # peers' tokens, for the frames route's check
        self.backlogs = Backlogs()  # what peers' text may wait here, at most, by connection
        # A2A agents as connections: their texts sent as A2A messages, their tasks followed.
        self.a2a_agents = A2AAgents()
        intake = Intake(budget.peer_queue, self.backlogs)
        self.remote_tasks = RemoteTasks(store, clock, self.a2a_agents, intake)
        self.sender = FederationSender(
            store,
            clock,
            self.peers,
            send_frames,
            in_flight=send_batches,
            fate=self.deliverers.fate_of(FRAME_KIND),
            a2a=A2APeer(store, clock, self.a2a_agents, intake, a2a_task_timeout),
        )
        self._background: set[asyncio.Task[None]] = set()
        self._unsubscribe: list[Callable[[], None]] = []

    async def start(self) -> None:
        self._unsubscribe = [
            self.store.subscribe(subscriber)
            for subscriber in (
                self.scheduler.on_commit,
                self.outbox.on_commit,
                self.sender.on_commit,
                self.remote_tasks.on_commit,
                self.topic_watch.on_commit,  # before the watch: a refusal comes before the end
                self.watch.on_commit,
                log_run_changes,
                self._send_stops,
                self._provision_hired,
                self.channels.threads.on_commit,
            )
        ]
        await self.scheduler.start()  # records the nodes' ends before they are asked
        interrupted = await reconcile(self.store, self.broker, self.clock, self.scheduler.caught_up)
        if interrupted:
            log.info(
                "%d run(s) were interrupted by the last stop; their text waits again", interrupted
            )
        await self.outbox.start()
        await self.sender.start()
        await self.remote_tasks.start()

    async def stop(self) -> None:
        await self.sender.stop()
        await self.remote_tasks.stop()
        await self.peers.close()
        await self.a2a_agents.close()
        await self.outbox.stop()
        await self.scheduler.stop()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    async def _send_stops(self, effects: Effects) -> None:
        """A stopped run's turn, if running, is cancelled on its node."""
        for run in effects.stopped:
            try:
                await self.broker.publish(
                    stop_subject(run.node_name), StopTurn(run_id=run.id).model_dump_json().encode()
                )
            except ParleyError as exc:
                log.warning("could not tell node %s to stop run %s: %s", run.node_name, run.id, exc)

    async def _provision_hired(self, effects: Effects) -> None:
        """A surge clone's node makes its workspace; its work may start once it has."""
        for agent in effects.hired:
            self._in_background(self._provision(agent))

    async def _provision(self, agent: Agent) -> None:
        if await provision(self.store, self.broker, agent):
            self.scheduler.wake()

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
