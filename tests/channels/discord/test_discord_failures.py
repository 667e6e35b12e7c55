"""How the Discord adapter's sends go wrong, against the fake through discord.py: a rate limit is
waited out; a cut connection is ``Unavailable`` (the outbox tries again); a refusal is final; a
bound thread Discord no longer knows ends its binding; a post without a token is refused with
how to set one, and the gateway session ends. And the sweep's farewell reaches an idle bound
thread."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.channels.sweeper import sweep_bindings
from parley.errors import Forbidden, NotFound, Unavailable
from parley.settings import Settings
from tests.channels.discord.fake_discord import FakeDiscord
from tests.channels.discord.on_discord import (
    ACCOUNT,
    MESSAGES,
    adapter,
    on_discord,
    place,
    scribe_on,
)
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def settings(settings: Settings, fake_discord: FakeDiscord) -> Settings:
    return on_discord(settings, False, fake_discord)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_discord: FakeDiscord, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_discord, tmp_path) as harness:
        yield harness


async def focused_thread(parley: Harness, fake: FakeDiscord) -> int:
    thread = await fake.user_starts_thread(fake.channel.id, "ada", "with scribe")
    await fake.user_runs_command(thread.id, "ada", "focus", {"target": "scribe"})
    await fake.wait_until(lambda: len(fake.state.replies) == 1)
    return thread.id


async def test_a_rate_limit_is_waited_out(parley: Harness, fake_discord: FakeDiscord) -> None:
    fake_discord.fail_next("POST", MESSAGES, status=429, retry_after=0.01)
    await adapter(parley).post(place(fake_discord.channel.id), "patience", None, "k:429")
    statuses = [c.status for c in fake_discord.state.calls_to("POST", MESSAGES)]
    assert statuses == [429, 200]


async def test_a_cut_connection_is_unavailable_and_the_retry_posts_once(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    general = place(fake_discord.channel.id)
    fake_discord.drop_next("POST", MESSAGES)
    with pytest.raises(Unavailable):
        await adapter(parley).post(general, "again", None, "k:cut")
    await adapter(parley).post(general, "again", None, "k:cut")
    assert fake_discord.state.texts(fake_discord.channel.id) == ["again"]


async def test_a_refusal_is_final(parley: Harness, fake_discord: FakeDiscord) -> None:
    fake_discord.fail_next("POST", f"/channels/{fake_discord.channel.id}/messages", status=403)
    with pytest.raises(Forbidden, match="Missing Permissions"):
        await adapter(parley).post(place(fake_discord.channel.id), "no", None, "k:403")


async def test_a_bound_thread_discord_no_longer_knows_ends_its_binding(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    thread = await focused_thread(parley, fake_discord)
    del fake_discord.state.channels[thread]  # gone without a word to the bot
    with pytest.raises(NotFound):
        await adapter(parley).post(place(thread, fake_discord.channel.id), "hi", "scribe", "k:404")
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert (binding["status"], binding["ended_reason"]) == ("ended", "thread-deleted")


async def test_without_a_token_a_post_is_refused_with_how_to_set_one(
    parley: Harness, fake_discord: FakeDiscord
) -> None:
    await call(parley, "DELETE", f"/channels/discord/accounts/{ACCOUNT}/token")
    with pytest.raises(Forbidden, match="parley channel account token discord bot"):
        await adapter(parley).post(place(fake_discord.channel.id), "hi", None, "k:none")
    assert fake_discord.state.calls_to("POST", MESSAGES) == []

    async def disconnected() -> bool:
        return not fake_discord.gateway.sockets

    assert await eventually(disconnected)  # a token taken away ends the gateway session


async def test_an_idle_bound_thread_gets_a_farewell_from_the_sweep(
    parley: Harness, fake_discord: FakeDiscord, clock: ManualClock
) -> None:
    thread = await focused_thread(parley, fake_discord)
    clock.advance(hours=23)
    assert await sweep_bindings(parley.context.store, clock) == []
    clock.advance(hours=1)  # 24 h idle: Discord's default idle timeout
    assert len(await sweep_bindings(parley.context.store, clock)) == 1
    await fake_discord.wait_until(lambda: len(fake_discord.state.texts(thread)) == 1)
    (farewell,) = fake_discord.state.messages[thread]
    assert "idle-timeout" in farewell.content and farewell.webhook_id is None
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["ended_reason"] == "idle-timeout"


async def test_tokens_are_checked_and_never_shown(parley: Harness) -> None:
    account = f"/api/v1/channels/discord/accounts/{ACCOUNT}/token"
    for bad in ("two words", "", "x" * 501, "nul\x00"):
        response = await parley.owner.put(account, json={"token": bad})
        assert response.status_code == 400, bad
    await call(parley, "PUT", "/channels/web/accounts/home", default_agent="scribe")
    response = await parley.owner.put(
        "/api/v1/channels/web/accounts/home/token", json={"token": "abc"}
    )
    assert response.status_code == 400 and "takes no token" in response.text
    member = parley.client(await parley.add_person("bo"))
    assert (await member.put(account, json={"token": "abc"})).status_code == 403
    shown = await parley.owner.get("/api/v1/channels/accounts")
    assert "fake-bot-token" not in shown.text
