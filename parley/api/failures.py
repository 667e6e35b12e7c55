"""Failed sign-ins and bad bearer tokens, limited per address: a token bucket per client
address that only failures draw from. An address that has failed its ``burst`` at once is
refused (429, with Retry-After) until it has earned a try back, at ``per_minute`` tries a
minute, whatever token it then sends; an address that never fails is never limited."""

from __future__ import annotations

import math
from dataclasses import dataclass

from starlette.types import Scope

from parley.clock import Clock
from parley.errors import Throttled

MAX_ADDRESSES = 10_000  # buckets kept at most; a full bucket is as good as none


@dataclass
class _Bucket:
    tries: float
    at: float  # seconds, by the clock


class FailureLimit:
    def __init__(self, burst: int, per_minute: float, clock: Clock) -> None:
        self.burst, self.per_second, self._clock = burst, per_minute / 60, clock
        self._buckets: dict[str, _Bucket] = {}

    def check(self, address: str) -> None:
        """Throttled if ``address`` has no try left."""
        bucket = self._refilled(address)
        if bucket is not None and bucket.tries < 1:
            wait = math.ceil((1 - bucket.tries) / self.per_second)
            raise Throttled(
                f"too many failed sign-ins or unknown tokens from {address}; try again in {wait} s",
                retry_after_seconds=wait,
            )

    def failed(self, address: str) -> None:
        bucket = self._refilled(address) or self._new(address)
        bucket.tries = max(0.0, bucket.tries - 1)

    def _now(self) -> float:
        return self._clock.now().timestamp()

    def _refilled(self, address: str) -> _Bucket | None:
        bucket = self._buckets.get(address)
        if bucket is not None:
            now = self._now()
            bucket.tries = min(self.burst, bucket.tries + (now - bucket.at) * self.per_second)
            bucket.at = now
        return bucket

    def _new(self, address: str) -> _Bucket:
        if len(self._buckets) >= MAX_ADDRESSES:
            self._forget_the_full()
        bucket = self._buckets[address] = _Bucket(float(self.burst), self._now())
        return bucket

    def _forget_the_full(self) -> None:
        now = self._now()
        for address, bucket in list(self._buckets.items()):
            if bucket.tries + (now - bucket.at) * self.per_second >= self.burst:
                del self._buckets[address]
        if len(self._buckets) >= MAX_ADDRESSES:  # all of them failing: forget the oldest
            oldest = min(self._buckets, key=lambda address: self._buckets[address].at)
            del self._buckets[oldest]


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
