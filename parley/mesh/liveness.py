"""Noticing that a node was lost or came back. A node's status is derived on every read from its
last heartbeat; this keeps which nodes the hub last knew online, so that each loss and each
return is logged once, however often the status is read, and each loss is acted on once."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

from parley.clock import Clock
from parley.mesh.model import Node, NodeStatus
from parley.store import Store
from parley.worker import Worker

log = logging.getLogger(__name__)

# Called once for each node lost to silence (its turns went with it), and for each back.
NodeLost = Callable[[str], Awaitable[None]]
NodeBack = Callable[[str], None]


async def nothing_lost(node: str) -> None:
    return None


def nothing_back(node: str) -> None:
    return None


class NodeLiveness(Worker):
    """Looks every ``interval`` once started (the first look is the starter's to take)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        offline_after: timedelta,
        on_lost: NodeLost = nothing_lost,
        on_back: NodeBack = nothing_back,
    ) -> None:
        self._store, self._clock = store, clock
        self._on_lost, self._on_back = on_lost, on_back
        self._offline_after = offline_after
        super().__init__("the nodes' liveness", every=self.interval, at_start=False, logger=log)
        self._online: set[str] | None = None  # unknown until the first look
        # Heard from while a look was reading: what that look read of them is already old.
        self._heard_meanwhile: set[str] = set()

    @property
    def interval(self) -> float:
        """How often to look: a loss is noticed within a quarter of the offline time."""
        return self._offline_after.total_seconds() / 4

    async def check(self) -> None:
        """Look at every node once; log those lost or back since the last look. The first look
        only learns: what was offline before this hub started is no news."""
        self._heard_meanwhile.clear()
        async with self._store.transaction() as tx:
            nodes = await tx.nodes.all()
        now = self._clock.now()
        online = {node.name for node in nodes if self._status(node) is NodeStatus.ONLINE}
        if self._online is None:
            self._online = online
            return
        for node in nodes:
            if node.name in self._online - online - self._heard_meanwhile:
                silent = (now - node.last_seen_at).total_seconds()
                log.info("node %s lost last_seen=%.0fs ago", node.name, silent)
                await self._on_lost(node.name)  # if this fails, the next look tries again
                self._online.discard(node.name)
        for name in sorted(online - self._online):
            self._back(name)

    def heard(self, name: str, silent_for: timedelta) -> None:
        """A heartbeat came after ``silent_for`` without one: a node lost until now is back, and
        so is one silent past the offline time whose loss no look saw (it went and came back
        between two looks; what waited for its return, a workspace, must not wait on). Such a
        loss is not acted on: its turns may well have gone on, and their ends will come."""
        self._heard_meanwhile.add(name)
        if self._online is None:
            return
        if name not in self._online or silent_for > self._offline_after:
            self._back(name)

    def joined(self, name: str) -> None:
        """A node registered (its join is logged by the registry)."""
        self._heard_meanwhile.add(name)
        if self._online is not None:
            self._online.add(name)

    def gone(self, name: str) -> None:
        """A node removed (its loss is acted on by whoever removed it): no loss to notice."""
        self._heard_meanwhile.discard(name)
        if self._online is not None:
            self._online.discard(name)

    def _back(self, name: str) -> None:
        assert self._online is not None
        self._online.add(name)
        log.info("node %s back online", name)
        self._on_back(name)

    async def one_pass(self) -> float | None:
        await self.check()
        return None

    def _status(self, node: Node) -> NodeStatus:
        return node.status(self._clock.now(), self._offline_after)
