"""The scheduler: starts queued runs in arrival order on their agents' nodes, at most
``max_sessions`` running per agent and one per session, and hands what the nodes report to the
outcome recorder: reply chunks as they come (core), turns' ends from the broker's durable
subjects, each batch acknowledged once recorded. Each node reports on subjects of its own: a
chunk or an end is taken only from the node its turn was sent to (``end_checks``,
``run_nodes``).

Starts are batched: one transaction starts every run that may start now (and the recorder
records every end stored meanwhile in one), so a busy hub pays a commit per batch, not per run
(group commit).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from pydantic import ValidationError

from parley.agents.model import Modality
from parley.broker.port import (
    Broker,
    Delivered,
    DurableSubscription,
    Gathering,
    Subscription,
)
from parley.clock import Clock
from parley.conversations.model import HopBudget
from parley.errors import ParleyError
from parley.hub.end_checks import (
    claimed,
    drop_ends_of_no_node,
    run_of,
    validation_errors,
)
from parley.hub.recorder import OutcomeRecorder
from parley.hub.run_nodes import RunNodes
from parley.hub.turns import Starting, build_turns
from parley.hub.turns_out import GATHER_SECONDS, TurnsOut
from parley.hub.watch import RunWatch
from parley.node.messages import (
    EARLIER_HUB_CONSUMER,
    HUB_CONSUMER,
    RUN_EVENTS_OF_EVERY_NODE,
    RUN_OUTCOMES_OF_EVERY_NODE,
    RUN_OUTCOMES_OF_NO_NODE,
    RunEvent,
    TurnStart,
    node_of,
    run_events_subject,
    turn_subject,
)
from parley.retrying import retrying
from parley.runs.model import RunChange, RunState
from parley.store import Store
from parley.store.effects import Effects
from parley.tokens import hash_token, new_run_token
from parley.worker import Worker

log = logging.getLogger(__name__)

BATCH = 256
START_TIMEOUT = 10.0
NODE_RETRY_SECONDS = 5.0
# Pauses between tries to queue again a run its node did not take, while the store is away.
REQUEUE_FIRST_SECONDS, REQUEUE_LONGEST_SECONDS = 0.05, 5.0


class Scheduler(Worker):
    """Each pass starts a batch of startable runs; woken by every commit that may have made one
    startable, and at once again while batches come full."""

    def __init__(
        self,
        store: Store,
        broker: Broker,
        clock: Clock,
        parley_url: str,
        watch: RunWatch,
        budget: HopBudget,
    ) -> None:
        self._store, self._broker, self._clock = store, broker, clock
        self._parley_url = parley_url
        self._watch = watch
        super().__init__("starting runs", logger=log)
        self._subscription: Subscription | None = None
        self._outcomes: DurableSubscription | None = None
        self._outcomes_of_no_node: DurableSubscription | None = None
        self._unreachable: dict[str, float] = {}
        # Nodes lost to silence: nothing starts there until they are heard again.
        self._lost: set[str] = set()
        self._recorder = OutcomeRecorder(store, clock, budget)
        self._dispatching: set[asyncio.Task[None]] = set()  # turns on their way to nodes
        self._out = TurnsOut(time.monotonic)
        self._run_nodes = RunNodes(store)
        # Whether a run may wait queued: only then does a run's end call for a pass (one per
        # turn for nothing cost a sixth of a turn). True while a pass runs, which may miss an
        # end that commits meanwhile.
        self._held_back = True

    async def start(self) -> None:
        self._subscription = await self._broker.subscribe_with_subject(
            RUN_EVENTS_OF_EVERY_NODE, self._on_chunk
        )
        gathering = Gathering(self._more_due, GATHER_SECONDS)
        self._outcomes = await self._broker.consume(
            RUN_OUTCOMES_OF_EVERY_NODE, HUB_CONSUMER, self._on_ends, gathering
        )
        # What an upgraded hub's broker still holds on the subject every node shared: dropped.
        self._outcomes_of_no_node = await self._broker.consume(
            RUN_OUTCOMES_OF_NO_NODE, EARLIER_HUB_CONSUMER, self._on_ends_of_no_node
        )
        await super().start()

    async def stop(self) -> None:
        for outcomes in (self._outcomes, self._outcomes_of_no_node):
            if outcomes is not None:
                await outcomes.unsubscribe()  # a batch being recorded comes again next start
        await super().stop()
        # A turn cut off on its way stays running; the next start's reconciliation asks the
        # nodes whether one holds it.
        for task in list(self._dispatching):
            task.cancel()
        await asyncio.gather(*self._dispatching, return_exceptions=True)
        if self._subscription is not None:
            await self._subscription.unsubscribe()

    async def caught_up(self) -> None:
        """Once every turn's end the broker stored before this call is recorded."""
        assert self._outcomes and self._outcomes_of_no_node, "started first"
        await self._outcomes.caught_up()
        await self._outcomes_of_no_node.caught_up()

    def node_lost(self, node: str) -> None:
        self._lost.add(node)

    def node_back(self, node: str) -> None:
        self._lost.discard(node)
        self._unreachable.pop(node, None)
        self.wake()

    async def on_commit(self, effects: Effects) -> None:
        self._run_nodes.ended(change.run.id for change in effects.changed if change.is_end)
        if effects.wake or (effects.freed and self._held_back):
            self.wake()

    async def one_pass(self) -> float | None:
        if await self._start_batch() == BATCH:
            return 0.0  # there may be more that can start
        return None

    async def _start_batch(self) -> int:
        self._held_back = True
        loop_time = asyncio.get_running_loop().time()
        away = {node for node, until in self._unreachable.items() if until > loop_time}
        away |= self._lost
        async with self._store.transaction() as tx:
            candidates = await tx.runs.startable(BATCH)
            agents = await tx.agents.by_ids({run.agent_id for run in candidates})
            load, busy = await tx.runs.running_load(list(agents))
            # Stamped after reading the load: later than the finish of any run whose slot this
            # takes (on PostgreSQL a finish committed just before that read may be stamped later
            # than a clock read before it).
            now = self._clock.now()
            picked = []
            for run in candidates:
                agent = agents[run.agent_id]
                if run.session_id in busy or load.get(agent.id, 0) >= agent.max_sessions:
                    continue
                if agent.node_name in away:
                    continue
                busy.add(run.session_id)
                load[agent.id] = load.get(agent.id, 0) + 1
                picked.append(run.id)
            tokens = {run_id: new_run_token() for run_id in picked}
            # One statement for the batch (on PostgreSQL), not one per run, that also reads them.
            hashes = {run_id: hash_token(token) for run_id, token in tokens.items()}
            started = await tx.runs.start_many(hashes, now)
            starting = [
                Starting(begun, agents[begun.agent_id], tokens[run_id])
                for run_id in picked
                if (begun := started.get(run_id)) is not None
            ]
            if len(starting) < len(picked):
                self.wake()  # a run stopped meanwhile kept a slot another may take now
            for s in starting:
                tx.effects.changed.append(RunChange(s.run, RunState.RUNNING, now))
            turns = await build_turns(tx, starting, self._parley_url)
            held_back = len(candidates) == BATCH or await tx.runs.any_queued()
        sent = [
            (s.agent.node_name, turn)
            for s, turn in zip(starting, turns, strict=True)
            if s.agent.modality is not Modality.HUMAN  # a person's turn waits for them
        ]
        self._held_back = held_back
        self._out.sent([turn.run_id for _, turn in sent])
        for node, turn in sent:
            self._run_nodes.sent(turn.run_id, node)
            self._send_off(node, turn)
        return len(candidates)

    def _send_off(self, node: str, turn: TurnStart) -> None:
        """The turn goes to its node while the loop goes on: waiting for each node's answer
        before the next batch held up every run that became startable meanwhile (a round trip
        through the broker per batch), and one slow node held up every other."""
        task = asyncio.create_task(self._dispatch(node, turn))
        self._dispatching.add(task)
        task.add_done_callback(self._dispatching.discard)

    async def _dispatch(self, node: str, turn: TurnStart) -> None:
        try:
            await self._broker.request(
                turn_subject(node), turn.model_dump_json().encode(), START_TIMEOUT
            )
        except ParleyError as exc:
            log.warning("node %s did not take run %s: %s; it waits", node, turn.run_id, exc)
            self._out.ended([turn.run_id])
            self._run_nodes.ended([turn.run_id])
            self._unreachable[node] = asyncio.get_running_loop().time() + NODE_RETRY_SECONDS
            await self._requeue(turn.run_id)
            asyncio.get_running_loop().call_later(NODE_RETRY_SECONDS, self.wake)

    async def _requeue(self, run_id: int) -> None:
        """Queue again a run its node did not take. A store blip must not leave it running on
        no node: tried again, the pause growing to the longest, until done or the scheduler
        stops (then the next start's reconciliation finds it)."""

        async def requeue() -> None:
            async with self._store.transaction() as tx:
                await tx.runs.requeue(run_id)
            self._held_back = True

        await retrying(
            requeue,
            what=f"queueing run {run_id} again",
            first=REQUEUE_FIRST_SECONDS,
            longest=REQUEUE_LONGEST_SECONDS,
            logger=log,
        )

    async def _on_chunk(self, message: Delivered) -> bytes | None:
        try:
            event = RunEvent.model_validate_json(message.data)
        except ValidationError as exc:
            log.warning("ignored a malformed reply chunk: %s", validation_errors(exc))
            return None
        node = node_of(message.subject, run_events_subject)
        if event.is_end:
            log.warning("ignored the end of run %s sent as a chunk", event.run_id)
        elif node is None or not await self._run_nodes.runs_on(event.run_id, node):
            log.debug("dropped a chunk on %s: run %s is not on it", message.subject, event.run_id)
        elif event.tool_call is not None:
            self._watch.tool(event.run_id, event.tool_call)
        else:
            self._watch.chunk(event.run_id, event.text)
        return None

    async def _on_ends(self, batch: Sequence[Delivered]) -> None:
        """Checked (``end_checks``) and recorded in one transaction (the recorder's fallbacks
        included) before the broker is told: a hub that dies meanwhile gets the batch again,
        and records nothing twice. What fails the checks is dropped, and acknowledged."""
        claims = [claim for message in batch if (claim := claimed(message)) is not None]
        if claims:
            self._out.ended(await self._recorder.record(claims))

    async def _on_ends_of_no_node(self, batch: Sequence[Delivered]) -> None:
        drop_ends_of_no_node(batch)

    def _more_due(self, batch: Sequence[bytes]) -> bool:
        """Whether turns sent off with those whose ends are at hand are still out."""
        return self._out.more_due([r for data in batch if (r := run_of(data)) is not None])
