"""Parley stopped between "the completion's post is in the outbox" and "sent", then started
again on the same store: each post reaches its thread once. The fake cut the connection of
each post: of one after Slack took it (Parley cannot know it did: the restarted server finds
the post's key in the thread and posts nothing), of the other before (it is posted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.slack.fake_slack import GENERAL, FakeSlack
from tests.channels.slack.on_slack import on_slack, parley_on, set_up_account
from tests.channels.slack.test_slack_threads import completion_texts, go
from tests.channels.test_bound_completions import MANAGER, answer_both, deliveries_of, settled
from tests.runs.support import script
from tests.support import Harness, ManualClock, eventually

POST = "chat.postMessage"


@pytest.fixture
def settings(settings: Settings, fake_slack: FakeSlack) -> Settings:
    return on_slack(settings, True, fake_slack)


async def test_a_post_written_but_not_sent_is_delivered_once_after_a_restart(
    settings: Settings, clock: ManualClock, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    async def setup(harness: Harness) -> None:
        await harness.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await harness.hire("ann", human="owner")
        await harness.hire("bob", human="owner")
        await set_up_account(harness, fake_slack, "manager")

    async with parley_on(settings, clock, fake_slack, setup) as parley:
        turns = await go(parley, fake_slack)
        assert await eventually(lambda: settled(parley, "channel_thread", 2))
        fake_slack.drop_next(POST, taken=True)
        fake_slack.drop_next(POST)
        await answer_both(parley, turns)

        async def both_tried_and_waiting() -> bool:
            posts = await deliveries_of(parley, "channel_post")
            return len(posts) == 2 and all(
                p["state"] == "pending" and p["attempts"] == 1 and p["last_error"] for p in posts
            )

        assert await eventually(both_tried_and_waiting)
    threads = [p.ts for p in fake_slack.posts()]
    assert sorted(len(completion_texts(fake_slack, t)) for t in threads) == [0, 1]

    async with parley_on(settings, clock, fake_slack) as parley:

        async def delivered() -> bool:
            clock.advance(seconds=600)  # past any backoff
            parley.context.runtime.outbox.wake()
            return await settled(parley, "channel_post", 2)

        assert await eventually(delivered)
    for thread in threads:
        (text,) = completion_texts(fake_slack, thread)
        assert text.endswith("done: done")
    assert completion_texts(fake_slack) == []
    assert [c.status for c in fake_slack.calls_to(POST)].count(200) == 2 + 1  # intros + one
    assert len(fake_slack.posts(GENERAL)) == 2
