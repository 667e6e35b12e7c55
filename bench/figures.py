"""What a one-way exchange bench reports: messages/s and the latency of one message."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Figures:
    messages: int
    concurrency: int
    seconds: float  # wall time of the measured messages, warm-up excluded
    p50_ms: float
    p99_ms: float
    # The server process's CPU (user + system) per measured message, where the bench reads it:
    # steadier than the clock on a machine whose speed swings from run to run.
    server_cpu_ms: float | None = None

    @property
    def per_second(self) -> float:
        return self.messages / self.seconds

    @classmethod
    def of(
        cls,
        latencies: list[float],
        seconds: float,
        concurrency: int,
        server_cpu_seconds: float | None = None,
    ) -> Figures:
        """From each message's latency in seconds and the whole run's wall time (and the
        server's CPU seconds meanwhile, if read)."""
        if not latencies or seconds <= 0:
            raise ValueError("no message was measured")
        ordered = sorted(latencies)
        return cls(
            messages=len(ordered),
            concurrency=concurrency,
            seconds=seconds,
            p50_ms=_percentile(ordered, 0.50) * 1000,
            p99_ms=_percentile(ordered, 0.99) * 1000,
            server_cpu_ms=(
                None if server_cpu_seconds is None else server_cpu_seconds * 1000 / len(ordered)
            ),
        )


def _percentile(ordered: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted values."""
    return ordered[max(1, math.ceil(share * len(ordered))) - 1]
