"""One commit path: whatever a committed transaction set in motion is acted on by the store's
subscribers, however the transaction was opened; nothing acts on a rollback."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from parley.conversations.person import say as say_in_store
from parley.node.messages import StopTurn, stop_subject
from parley.runs.model import RunState
from parley.runs.stop import stop_runs
from parley.store import Store
from parley.store.effects import Effects
from tests.runs.support import script
from tests.support import Harness, eventually


async def test_subscribers_act_after_commit_only(tmp_path: Path, direct_driver: bool) -> None:
    store = await Store.open(f"sqlite:///{tmp_path}/commit.db", direct_driver=direct_driver)
    seen: list[Effects] = []

    async def subscriber(effects: Effects) -> None:
        seen.append(effects)

    unsubscribe = store.subscribe(subscriber)
    try:
        async with store.transaction() as tx:
            tx.effects.wake = True
        assert len(seen) == 1 and seen[0].wake
        with pytest.raises(ValueError):
            async with store.transaction() as tx:
                tx.effects.outbox = True
                raise ValueError("rolled back")
        assert len(seen) == 1  # a rollback sets nothing in motion
        async with store.transaction():
            pass
        assert len(seen) == 1  # nothing to act on: subscribers are not called
        unsubscribe()
        async with store.transaction() as tx:
            tx.effects.wake = True
        assert len(seen) == 1
    finally:
        await store.close()


async def test_a_failing_subscriber_neither_fails_the_commit_nor_silences_the_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, direct_driver: bool
) -> None:
    store = await Store.open(f"sqlite:///{tmp_path}/commit.db", direct_driver=direct_driver)
    reached: list[str] = []

    async def broken(effects: Effects) -> None:
        raise RuntimeError("subscriber broke")

    async def healthy(effects: Effects) -> None:
        reached.append("healthy")

    store.subscribe(broken)
    store.subscribe(healthy)
    try:
        with caplog.at_level(logging.ERROR):
            async with store.transaction() as tx:
                tx.effects.wake = True
    finally:
        await store.close()
    assert reached == ["healthy"]
    assert "subscriber broke" in caplog.text


async def test_text_queued_in_a_plain_transaction_wakes_the_scheduler(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire(
        "echo", brain=script(tmp_path, "echo", "otherwise: [{reply: 'heard {text}'}]")
    )
    store = parley.context.store
    async with store.transaction() as tx:
        owner = await tx.people.by_name("owner")
        assert owner is not None
        queued = await say_in_store(tx, parley.clock, owner, "echo", "ping")

    async def answered() -> bool:
        async with store.transaction() as tx:
            run = await tx.runs.by_id(queued.run_id)
        return run is not None and run.state is RunState.FINISHED

    assert await eventually(answered)


async def test_a_stop_in_a_plain_transaction_reaches_the_node_and_the_watchers(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("slow", brain=script(tmp_path, "slow", "otherwise: [{sleep: 30}]"))
    store, broker = parley.context.store, parley.context.broker
    stops: asyncio.Queue[StopTurn] = asyncio.Queue()

    async def on_stop(data: bytes) -> None:
        stops.put_nowait(StopTurn.model_validate_json(data))

    subscription = await broker.subscribe(stop_subject("local"), on_stop)
    try:
        async with store.transaction() as tx:
            owner = await tx.people.by_name("owner")
            assert owner is not None
            queued = await say_in_store(tx, parley.clock, owner, "slow", "wait")

        async def running() -> bool:
            async with store.transaction() as tx:
                run = await tx.runs.by_id(queued.run_id)
            return run is not None and run.state is RunState.RUNNING

        assert await eventually(running)
        with parley.context.runtime.watch.watching(queued.run_id) as watched:
            async with store.transaction() as tx:
                run = await tx.runs.by_id(queued.run_id)
                assert run is not None
                await stop_runs(tx, [run], parley.clock.now(), "stopped in a test")
            stop = await asyncio.wait_for(stops.get(), 5)
            end = await asyncio.wait_for(watched.get(), 5)
        assert stop.run_id == queued.run_id
        assert (end.kind, end.text) == ("end", "stopped")
    finally:
        await subscription.unsubscribe()
