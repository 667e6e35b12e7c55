"""Parley stopped between "the completion's post is in the outbox" and "sent" (the fake cut the
connection of its webhook execute: Parley cannot know whether Discord took it; the fake did
not), then started again on the same store: each post reaches its thread once."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.discord.fake_discord import FakeDiscord
from tests.channels.discord.fake_rest import WEBHOOK_EXECUTE
from tests.channels.discord.on_discord import on_discord, parley_on, set_up_account
from tests.channels.discord.test_discord_threads import completion_texts, go
from tests.channels.test_bound_completions import MANAGER, answer_both, deliveries_of, settled
from tests.runs.support import script
from tests.support import Harness, ManualClock, eventually


@pytest.fixture
def settings(settings: Settings, fake_discord: FakeDiscord) -> Settings:
    return on_discord(settings, True, fake_discord)


async def test_a_post_written_but_not_sent_is_delivered_once_after_a_restart(
    settings: Settings, clock: ManualClock, fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    async def setup(harness: Harness) -> None:
        await harness.hire("manager", brain=script(tmp_path, "manager", MANAGER))
        await harness.hire("ann", human="owner")
        await harness.hire("bob", human="owner")
        await set_up_account(harness, fake_discord, "manager")

    async with parley_on(settings, clock, fake_discord, setup) as parley:
        turns = await go(parley, fake_discord)
        assert await eventually(lambda: settled(parley, "channel_thread", 2))
        fake_discord.drop_next("POST", WEBHOOK_EXECUTE, times=2)
        await answer_both(parley, turns)

        async def both_tried_and_waiting() -> bool:
            posts = await deliveries_of(parley, "channel_post")
            return len(posts) == 2 and all(
                p["state"] == "pending" and p["attempts"] == 1 and p["last_error"] for p in posts
            )

        assert await eventually(both_tried_and_waiting)
    threads = fake_discord.state.threads()
    assert [completion_texts(fake_discord, t.id) for t in threads] == [[], []]

    async with parley_on(settings, clock, fake_discord) as parley:

        async def delivered() -> bool:
            clock.advance(seconds=600)  # past any backoff
            return await settled(parley, "channel_post", 2)

        assert await eventually(delivered)
    for thread in threads:
        (text,) = completion_texts(fake_discord, thread.id)
        assert text.endswith("done: done")
    assert completion_texts(fake_discord, fake_discord.channel.id) == []
    executes = fake_discord.state.calls_to("POST", WEBHOOK_EXECUTE)
    assert [c.status for c in executes].count(200) == 2
