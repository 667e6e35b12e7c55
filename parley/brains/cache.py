"""A node's model brains, one per brain spec: a provider client (its HTTP connections) is built
at the first turn that needs it and shared by later turns with the same spec. A turn leases its
brain for as long as it runs, and a brain is closed only once no turn holds it: when it has gone
unused for ``idle_seconds``, when more than ``max_brains`` are kept (the least recently used
first), and when the node stops. Other brains are made afresh at each turn."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from parley.brains.brain import Brain
from parley.clock import Clock, SystemClock

log = logging.getLogger(__name__)


@dataclass(eq=False)  # compared by identity, as `in` does in _evicted
class _Kept:
    spec: str
    brain: Brain
    used: datetime  # when a turn last took it or gave it back
    leases: int = 0
    dropped: bool = False  # out of the cache while leased: closed when its last turn ends


class BrainCache:
    def __init__(
        self,
        build: Callable[[str], Brain],
        clock: Clock | None = None,
        idle_seconds: float = 600.0,
        max_brains: int = 32,
    ) -> None:
        self._build, self._clock = build, clock or SystemClock()
        self.idle_seconds, self._max = idle_seconds, max_brains
        self._kept: OrderedDict[str, _Kept] = OrderedDict()  # least recently used first

    @asynccontextmanager
    async def lease(self, spec: str) -> AsyncIterator[Brain]:
        """``spec``'s brain for one turn; it is not closed before the turn gives it back, which
        it does however it ends (cancelled included)."""
        await self.sweep()  # first, so that a brain unused too long is not handed out again
        taken = self._take(spec)
        if not isinstance(taken, _Kept):
            yield taken  # made for this turn alone
            return
        try:
            await self.sweep()  # a brain just built may push the least recently used one out
            yield taken.brain
        finally:
            # Counted back before any await: a second cancellation cannot leave it held.
            await self._close([*self._give_back(taken), *self._evicted()])

    async def sweep(self) -> None:
        """Close the brains no turn holds that went unused too long or are past the bound."""
        await self._close(self._evicted())

    async def keep_swept(self) -> None:
        """Sweep until cancelled, so that a quiet node's clients close too (at most half the
        idle time late); busy nodes are swept at each lease anyway."""
        while True:
            await asyncio.sleep(self.idle_seconds / 2)
            await self.sweep()

    async def close(self) -> None:
        """The node stops: close every brain, a leased one when its last turn gives it back."""
        kept, self._kept = list(self._kept.values()), OrderedDict()
        for entry in kept:
            entry.dropped = True
        await self._close(entry.brain for entry in kept if not entry.leases)

    def _take(self, spec: str) -> _Kept | Brain:
        kept = self._kept.get(spec)
        if kept is None:
            brain = self._build(spec)  # a spec that fails to build is kept nowhere
            # Only a brain holding a client is kept: the others are cheap, and a command brain
            # reads the node's environment when it is made, which must be this turn's.
            if not hasattr(brain, "aclose"):
                return brain
            kept = self._kept[spec] = _Kept(spec, brain, self._clock.now())
        kept.leases += 1
        self._kept.move_to_end(spec)
        return kept

    def _give_back(self, kept: _Kept) -> list[Brain]:
        """What to close now that a turn is done with ``kept``."""
        kept.leases -= 1
        kept.used = self._clock.now()
        if kept.dropped:
            return [] if kept.leases else [kept.brain]
        self._kept.move_to_end(kept.spec)
        return []

    def _evicted(self) -> list[Brain]:
        """Take out of the cache the brains to close: the idle ones unused for ``idle_seconds``,
        then the least recently used idle ones past ``max_brains``. A leased brain stays."""
        now, idle_for = self._clock.now(), timedelta(seconds=self.idle_seconds)
        idle = [kept for kept in self._kept.values() if not kept.leases]
        stale = [kept for kept in idle if now - kept.used >= idle_for]
        excess = max(len(self._kept) - len(stale) - self._max, 0)
        spare = [kept for kept in idle if kept not in stale][:excess]
        for kept in (*stale, *spare):
            del self._kept[kept.spec]
        return [kept.brain for kept in (*stale, *spare)]

    async def _close(self, brains: Iterable[Brain]) -> None:
        for brain in brains:
            close = getattr(brain, "aclose", None)
            if close is None:
                continue
            try:
                await close()
            except Exception:  # logged only: it must neither keep the others open nor fail a turn
                log.exception("closing a brain's client failed")
