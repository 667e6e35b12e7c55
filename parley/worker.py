"""A long-running loop, written once: started and stopped with its owner, woken when there may be
work, one pass at a time; a pass that fails is logged and the loop goes on, a store or broker that
is away is waited for with growing pauses, a pass that overruns is named in a warning.

Each background loop (scheduler, outbox, federation sender, sweepers, heartbeat, liveness, …)
says only what one pass does and when the next is due."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod

from parley.errors import ParleyError, Unavailable

log = logging.getLogger(__name__)

FIRST_PAUSE_SECONDS = 0.5
LONGEST_PAUSE_SECONDS = 30.0


class Worker(ABC):
    """Subclasses write ``one_pass``; its answer says when the next pass is due: ``0`` at once,
    ``None`` only when woken, a number of seconds otherwise (``every`` if given is the default
    wait between passes for loops that return ``None`` yet must also tick; ``at_start``: whether
    the first pass comes at once, or only after a first ``every``)."""

    def __init__(
        self,
        name: str,
        *,
        every: float | None = None,
        at_start: bool = True,
        overrun: float | None = None,
        first_pause: float = FIRST_PAUSE_SECONDS,
        longest_pause: float = LONGEST_PAUSE_SECONDS,
        logger: logging.Logger | None = None,
    ) -> None:
        self.worker_name = name
        self._every = every
        self._at_start = at_start
        self._overrun = overrun
        self._first_pause, self._longest_pause = first_pause, longest_pause
        self._log = logger or log
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.passes = 0  # how many passes ended, well or not: what tests wait on

    @abstractmethod
    async def one_pass(self) -> float | None:
        """Do what is due; seconds until the next pass (``None``: when woken or ``every``)."""

    async def start(self) -> None:
        self.start_soon()

    def start_soon(self) -> None:
        """Start from code that cannot wait (a wake that finds a loop to make): the same."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self.worker_name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def wake(self) -> None:
        self._wakeup.set()

    async def _loop(self) -> None:
        pause = self._first_pause
        wait: float | None = 0.0 if self._at_start else None
        while True:
            await self._wait(wait)
            self._wakeup.clear()
            began = time.monotonic()
            try:
                wait = await self.one_pass()
                pause = self._first_pause
            except Unavailable as exc:  # what it needs is away: nothing to do but wait
                self._log.warning("%s paused, again in %.2fs: %s", self.worker_name, pause, exc)
                wait, pause = pause, min(pause * 2, self._longest_pause)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the loop must outlive any one bad pass
                name = self.worker_name
                self._log.exception("%s: a pass failed (%s); again shortly", name, _why(exc))
                wait = self._first_pause
            finally:
                self.passes += 1
            self._warn_on_overrun(time.monotonic() - began)

    async def _wait(self, wait: float | None) -> None:
        if wait is None:
            wait = self._every
        if wait is None:
            await self._wakeup.wait()
            return
        if wait == 0:
            await asyncio.sleep(0)  # others run between back-to-back passes
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wakeup.wait(), wait)

    def _warn_on_overrun(self, took: float) -> None:
        if self._overrun is not None and took > self._overrun:
            self._log.warning(
                "%s: one pass took %.1fs (more than %.1fs)", self.worker_name, took, self._overrun
            )


def _why(exc: BaseException) -> str:
    return exc.message if isinstance(exc, ParleyError) else str(exc) or type(exc).__name__
