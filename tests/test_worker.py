"""The one loop shape every background worker uses: passes when woken or due, a failing pass
logged and survived, a store away waited for with growing pauses, an overrun named."""

from __future__ import annotations

import asyncio
import logging

import pytest

from parley.errors import Unavailable
from parley.worker import Worker


class Scripted(Worker):
    def __init__(self, answers: list[object], **kwargs: object) -> None:
        super().__init__("scripted", **kwargs)  # type: ignore[arg-type]
        self.answers = answers
        self.done = asyncio.Event()
        self.passed = asyncio.Event()

    async def one_pass(self) -> float | None:
        self.passed.set()
        if not self.answers:
            self.done.set()
            return None
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, tuple):  # (seconds to spend, next wait)
            await asyncio.sleep(answer[0])
            return float(answer[1])
        return answer  # type: ignore[return-value]


async def _finished(worker: Scripted) -> None:
    await worker.start()
    try:
        await asyncio.wait_for(worker.done.wait(), 5)
    finally:
        await worker.stop()


async def test_a_failing_pass_is_logged_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    worker = Scripted([RuntimeError("boom"), 0.0], first_pause=0.01)
    await _finished(worker)
    assert "scripted: a pass failed (boom)" in caplog.text
    assert worker.passes == 3


async def test_a_store_away_is_waited_for_with_doubling_pauses(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    worker = Scripted([Unavailable("db down")] * 3, first_pause=0.01, longest_pause=0.02)
    await _finished(worker)
    pauses = [r.getMessage() for r in caplog.records if "paused" in r.getMessage()]
    assert [p.split("again in ")[1].split("s:")[0] for p in pauses] == ["0.01", "0.02", "0.02"]
    assert len(pauses) == 3 and all("db down" in p for p in pauses)


async def test_a_pass_waiting_for_a_wake_runs_when_woken() -> None:
    worker = Scripted([None, None])
    await worker.start()
    try:
        await asyncio.wait_for(worker.passed.wait(), 5)
        worker.passed.clear()
        with pytest.raises(TimeoutError):  # nothing due: it waits
            await asyncio.wait_for(asyncio.shield(worker.passed.wait()), 0.05)
        worker.wake()
        await asyncio.wait_for(worker.passed.wait(), 5)
    finally:
        await worker.stop()
    assert not worker.running


async def test_an_overrunning_pass_is_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    worker = Scripted([(0.05, 0.0)], overrun=0.01)
    await _finished(worker)
    assert "scripted: one pass took" in caplog.text


async def test_every_ticks_a_loop_that_is_never_woken() -> None:
    worker = Scripted([None, None], every=0.01)
    await _finished(worker)
    assert worker.passes == 3


async def test_a_worker_not_at_start_waits_a_first_every() -> None:
    worker = Scripted([None], every=3600, at_start=False)
    await worker.start()
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.shield(worker.passed.wait()), 0.05)
        worker.wake()  # a wake still brings a pass forward
        await asyncio.wait_for(worker.passed.wait(), 5)
    finally:
        await worker.stop()
