"""How long a transiently failed delivery waits: exponential in its attempts, capped, with full
jitter (a uniform draw between zero and the bound), so that items failing together — a receiver
that went away — do not all come back at the same moment."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta


def full_jitter(bound: float) -> float:
    return random.uniform(0.0, bound)


def equal_jitter(bound: float) -> float:
    """At least half the bound: for waits that must not come back at once."""
    return random.uniform(bound / 2, bound)


@dataclass(frozen=True)
class Backoff:
    base_seconds: float = 1.0
    cap_seconds: float = 300.0
    # Draws the wait from its bound; tests pass a fixed one.
    draw: Callable[[float], float] = field(default=full_jitter, repr=False)

    def bound(self, attempts: int) -> float:
        """The longest wait after the ``attempts``-th failed attempt (1, 2, 4, … up to the cap)."""
        exponent = min(max(attempts, 1) - 1, 32)  # past 2**32 every bound is the cap anyway
        return min(self.cap_seconds, self.base_seconds * 2.0**exponent)

    def delay(self, attempts: int) -> timedelta:
        return timedelta(seconds=self.draw(self.bound(attempts)))
