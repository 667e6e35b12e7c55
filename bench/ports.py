"""Loopback ports for the servers the suite and the benches start, picked where the kernel never
picks one itself.

A port the kernel chose (bind to port 0) is free only while it is held: once the probe closes it,
the kernel may hand the same number to any outgoing connection as its local port (to PostgreSQL,
to NATS, to another test's server), and the server meant for it then fails to bind. CI saw it
("address already in use" for a port just found free). Ports below the range the kernel draws
outgoing ports from are never handed out so; only another test's pick can take one, and the
probe sees that.
"""

from __future__ import annotations

import functools
import random
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 10000
# Linux's default lower bound, and below macOS's (49152), where /proc is not there to ask.
DEFAULT_EPHEMERAL_LOW = 32768
# Not the random module's shared generator: Hypothesis seeds it the same in every test it runs,
# and two workers drawing the same ports at once would race for them.
_PICK = random.SystemRandom()


def free_port() -> int:
    """A loopback port nothing listens on, outside the kernel's range for outgoing ports."""
    below = ephemeral_low()
    for _ in range(200):
        port = _PICK.randrange(LOWEST, below) if below > LOWEST else 0
        found = _bindable(port)
        if found:
            return found
    raise RuntimeError(f"no free loopback port between {LOWEST} and {below}")


@functools.cache  # the kernel's setting, read once per process
def ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return DEFAULT_EPHEMERAL_LOW


def _bindable(port: int) -> int:
    """``port`` (or the kernel's pick, for 0) if it can be bound now, else 0."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return 0
        bound: int = probe.getsockname()[1]
        return bound
