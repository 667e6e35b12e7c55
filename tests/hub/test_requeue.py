"""A turn its node did not take is queued again, even across a store blip: it never stays
running on no node (and so the scheduler sends it off again later)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from parley.errors import Unavailable
from parley.node.messages import turn_subject
from parley.node.runner import NodeRunner
from parley.store import Store, Tx
from tests.node_creds import node_key
from tests.runs.support import get, say
from tests.support import Harness, eventually


class _BlipOnce:
    """The real store's transactions, the first one opened once ``armed`` raising Unavailable."""

    def __init__(self, store: Store) -> None:
        self._real: Callable[[], AbstractAsyncContextManager[Tx]] = store.transaction
        self.armed = self.blipped = False

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        if self.armed:
            self.armed, self.blipped = False, True
            raise Unavailable("the store went away for a moment (test)")
        async with self._real() as tx:
            yield tx


async def test_a_store_blip_while_requeueing_leaves_no_run_running_on_no_node(
    parley: Harness,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = parley.context.store
    blip = _BlipOnce(store)
    monkeypatch.setattr(store, "transaction", blip.transaction)
    key = await node_key(parley, "beta")
    beta = NodeRunner("beta", parley.context.broker, key, tmp_path / "beta", 3600)
    await beta.start()
    await parley.hire("far", node="beta")
    await beta.stop()

    async def refuses(data: bytes) -> bytes:
        if not blip.blipped:
            blip.armed = True  # the next transaction, the requeue's, fails once
        raise Unavailable("beta is not taking turns (test)")

    refusing = await parley.context.broker.subscribe(turn_subject("beta"), refuses)
    caplog.set_level(logging.WARNING)
    far = await say(parley.owner, "far", "hello")

    async def blipped() -> bool:
        return blip.blipped  # asked of the store only once it blipped: the blip is the hub's

    async def queued_again() -> bool:
        return bool((await get(parley.owner, f"/runs/{far['run_id']}"))["run"]["state"] == "queued")

    assert await eventually(blipped)
    assert await eventually(queued_again)
    assert f"queueing run {far['run_id']} again" in caplog.text
    await refusing.unsubscribe()
