"""A chat service's fake served from a thread and event loop of its own, so that a blocking test
(one that drives ``parley serve`` as a separate process) can act as the service's people and
wait on what the bot did."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
HANG_GUARD = 30.0  # seconds: a wait that never ends is a failure, not a hung suite


class Fake(AbstractAsyncContextManager[Any], Protocol):
    async def wait_until(self, condition: Callable[[], bool]) -> None: ...


F = TypeVar("F", bound=Fake)


class FakeOnItsOwnLoop(Generic[F]):
    def __init__(self, fake: F) -> None:
        self.fake = fake
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def do(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """``work()`` run on the fake's loop, its answer once it is done."""
        return asyncio.run_coroutine_threadsafe(work(), self.loop).result(HANG_GUARD)

    def until(self, condition: Callable[[], bool]) -> None:
        """Wait until ``condition`` holds of the fake (read on its own loop)."""
        self.do(lambda: self.fake.wait_until(condition))

    @contextmanager
    def running(self) -> Iterator[F]:
        self._thread.start()
        self.do(self.fake.__aenter__)
        try:
            yield self.fake
        finally:
            self.do(lambda: self.fake.__aexit__(None, None, None))
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(HANG_GUARD)
            self.loop.close()
