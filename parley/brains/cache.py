"""A node's model brains, one per brain spec: a provider client (its HTTP connections) is built
at the first turn that needs it, shared by every later turn with the same spec, and closed when
the node stops. Other brains are made afresh at each turn."""

from __future__ import annotations

import logging
from collections.abc import Callable

from parley.brains.brain import Brain

log = logging.getLogger(__name__)


class BrainCache:
    def __init__(self, build: Callable[[str], Brain]) -> None:
        self._build = build
        self._brains: dict[str, Brain] = {}

    def __call__(self, spec: str) -> Brain:
        brain = self._brains.get(spec)
        if brain is None:
            brain = self._build(spec)  # a spec that fails to build is kept nowhere
            # Only a brain holding a client is kept: the others are cheap, and a command brain
            # reads the node's environment when it is made, which must be this turn's.
            if hasattr(brain, "aclose"):
                self._brains[spec] = brain
        return brain

    async def close(self) -> None:
        brains, self._brains = list(self._brains.values()), {}
        for brain in brains:
            close = getattr(brain, "aclose", None)
            if close is None:
                continue
            try:
                await close()
            except Exception:  # one client failing to close must not keep the others open
                log.exception("closing a brain's client failed")
