"""The fault proxy on a thread of its own with its own event loop, for tests whose
installations are driven synchronously (through the CLI and HTTP) while the proxy must keep
forwarding."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tests.federation.proxy import PASS_THROUGH, FaultProxy, Faults


@contextmanager
def proxy_thread(
    upstream: str, faults: Faults = PASS_THROUGH, *, seed: int = 0
) -> Iterator[FaultProxy]:
    """A started proxy to ``upstream``; closed, and its loop ended, when the block ends."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    proxy = asyncio.run_coroutine_threadsafe(
        FaultProxy(upstream, faults, seed=seed).start(), loop
    ).result(timeout=30)
    try:
        yield proxy
    finally:
        asyncio.run_coroutine_threadsafe(proxy.close(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
