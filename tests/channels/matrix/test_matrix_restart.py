"""Parley stopped between "the completion's post is in the outbox" and "sent": the homeserver
stored each post but its answer was cut, so Parley cannot know it was taken; started again on
the same store, the outbox tries again with the same transaction ids and the homeserver answers
the events it made: each completion is in its thread once. And the first sync after a start
skips history: what was said while Parley was away is not taken as a new turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.matrix.fake_matrix import FakeMatrix
from tests.channels.matrix.on_matrix import on_matrix, parley_on, set_up_account
from tests.channels.matrix.test_matrix_threads import go
from tests.channels.test_bound_completions import MANAGER, answer_both, deliveries_of, settled
from tests.runs.support import script
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def settings(settings: Settings, fake_matrix: FakeMatrix) -> Settings:
    return on_matrix(settings, True, fake_matrix)


async def test_a_post_sent_but_unanswered_is_delivered_once_after_a_restart(
    settings: Settings, clock: ManualClock, fake_matrix: FakeMatrix, tmp_path: Path
) -> None:
    async def setup(harness: Harness) -> None:
        await harness.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await harness.hire("ann", human="owner")
        await harness.hire("bob", human="owner")
        await set_up_account(harness, fake_matrix, "manager")

    general = fake_matrix.room.room_id
    async with parley_on(settings, clock, fake_matrix, setup) as parley:
        turns = await go(parley, fake_matrix)
        assert await eventually(lambda: settled(parley, "channel_thread", 2))
        roots = [e["event_id"] for e in fake_matrix.sent(general)]
        fake_matrix.cutting.add("send")
        await answer_both(parley, turns)

        async def both_tried_and_waiting() -> bool:
            posts = await deliveries_of(parley, "channel_post")
            return len(posts) == 2 and all(
                p["state"] == "pending" and p["attempts"] >= 1 and p["last_error"] for p in posts
            )

        assert await eventually(both_tried_and_waiting)
    fake_matrix.cutting.clear()
    assert [len(fake_matrix.texts(general, root)) for root in roots] == [1, 1]  # stored
    await fake_matrix.user_says(general, "ada", "go")  # said while Parley is away

    async with parley_on(settings, clock, fake_matrix) as parley:

        async def delivered() -> bool:
            clock.advance(seconds=600)  # past any backoff
            parley.context.runtime.outbox.wake()
            return await settled(parley, "channel_post", 2)

        assert await eventually(delivered)
        # the first sync's history was skipped before Parley yielded: 'go' was heard once
        shown = await call(parley, "GET", "/conversations/manager")
        said = [m["body"] for m in shown["messages"]["items"] if m["kind"] == "text"]
        assert said.count("go") == 1
    for root in roots:
        (text,) = fake_matrix.texts(general, root)
        assert text.endswith("done: done")
    assert [t for t in fake_matrix.texts(general) if t.startswith("subtask")] == []
    answered = [c for c in fake_matrix.calls_to("send") if c.status == 200]
    assert len(answered) == 2 + 2  # the intros, then each completion's retry, answered
