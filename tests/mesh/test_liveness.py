"""Which returns the hub notices (``NodeLiveness``), however its looks and the heartbeats fall:
a node silent past the offline time is back at its next heartbeat even when no look saw it
lost in between, so that what waited for it (a workspace) does not wait for good."""

from __future__ import annotations

from datetime import timedelta

from parley.mesh.liveness import NodeLiveness
from parley.settings import Settings
from parley.store import Store
from tests.support import ManualClock

OFFLINE_AFTER = timedelta(seconds=20)


class Returns:
    def __init__(self) -> None:
        self.back: list[str] = []
        self.lost: list[str] = []

    async def on_lost(self, name: str) -> None:
        self.lost.append(name)

    def on_back(self, name: str) -> None:
        self.back.append(name)


async def _heartbeat(store: Store, liveness: NodeLiveness, clock: ManualClock) -> None:
    """As the registry takes one: the node's last heartbeat moved to now, then the news."""
    async with store.transaction() as tx:
        before = await tx.nodes.touch("beta", clock.now())
    assert before is not None
    liveness.heard("beta", clock.now() - before)


async def _watching(database_url: str, clock: ManualClock) -> tuple[Store, NodeLiveness, Returns]:
    store = await Store.open(database_url)
    async with store.transaction() as tx:
        await tx.nodes.create_with_session("beta", "node:beta", "h", "/tmp/beta", clock.now())
    returns = Returns()
    liveness = NodeLiveness(store, clock, OFFLINE_AFTER, returns.on_lost, returns.on_back)
    await liveness.check()  # the first look learns beta online
    return store, liveness, returns


async def test_a_node_that_went_and_came_back_between_two_looks_is_back(
    database_url: str, clock: ManualClock
) -> None:
    store, liveness, returns = await _watching(database_url, clock)
    try:
        clock.advance(seconds=30)  # silent past the offline time; no look meanwhile
        await _heartbeat(store, liveness, clock)
        assert returns.back == ["beta"]
        await liveness.check()  # heard from: neither lost nor back again
        assert (returns.back, returns.lost) == (["beta"], [])
    finally:
        await store.close()


async def test_a_heartbeat_on_time_is_no_news_and_a_loss_seen_is_one_return(
    database_url: str, clock: ManualClock
) -> None:
    store, liveness, returns = await _watching(database_url, clock)
    try:
        clock.advance(seconds=5)
        await _heartbeat(store, liveness, clock)
        assert returns.back == []
        clock.advance(seconds=30)
        await liveness.check()
        assert returns.lost == ["beta"]
        await _heartbeat(store, liveness, clock)
        clock.advance(seconds=5)
        await _heartbeat(store, liveness, clock)
        await liveness.check()
        assert (returns.back, returns.lost) == (["beta"], ["beta"])
    finally:
        await store.close()


async def test_by_default_a_silent_node_is_lost_within_seconds(
    database_url: str, clock: ManualClock
) -> None:
    """With the default settings a node is lost (its turns failed, whoever waits told) at most
    eight seconds after its last heartbeat: silent past the offline time, seen at the next look;
    and it may miss two heartbeats without being lost."""
    defaults = Settings()
    offline_after = timedelta(seconds=defaults.node_offline_after_seconds)
    store = await Store.open(database_url)
    try:
        async with store.transaction() as tx:
            await tx.nodes.create_with_session("beta", "node:beta", "h", "/tmp/beta", clock.now())
        returns = Returns()
        liveness = NodeLiveness(store, clock, offline_after, returns.on_lost, returns.on_back)
        await liveness.check()
        two_missed = 2 * defaults.heartbeat_seconds + 0.5
        last_look = 8 - liveness.interval  # the looks come this often: one falls after this
        assert two_missed < last_look
        clock.advance(seconds=two_missed)
        await liveness.check()
        assert returns.lost == []
        clock.advance(seconds=last_look - two_missed)
        await liveness.check()
        assert returns.lost == ["beta"]
    finally:
        await store.close()
