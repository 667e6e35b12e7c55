"""How the Telegram adapter's sends and polls go wrong, against the fake through
python-telegram-bot (SQLite and PostgreSQL): a flood limit is waited out for as long as
Telegram asked, and the account shows rate-limited; a refused token is final and the account
shows refused; a blocked bot is final; a server error or a cut connection is ``Unavailable`` and
the retry posts once; an answer lost after Telegram took the post is what exactly-once cannot
cover (the retry posts again: documented); without a token a post is refused with how to set
one, and the poll ends."""

from __future__ import annotations

import gc
import warnings
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from parley.errors import Forbidden, Unauthorized, Unavailable
from parley.settings import Settings
from tests.channels.telegram.fake_telegram import FakeTelegram
from tests.channels.telegram.on_telegram import (
    ACCOUNT,
    account_row,
    adapter,
    moment,
    on_telegram,
    place,
    scribe_on,
)
from tests.channels.test_bound_completions import deliveries_of, settled
from tests.support import Harness, ManualClock, call, eventually

TOKEN = f"/channels/telegram/accounts/{ACCOUNT}/token"


@pytest.fixture
def settings(settings: Settings, fake_telegram: FakeTelegram) -> Settings:
    return on_telegram(settings, False, fake_telegram)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_telegram: FakeTelegram, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_telegram, tmp_path) as harness:
        yield harness


async def test_a_flood_limit_is_waited_out_and_shown(
    parley: Harness, fake_telegram: FakeTelegram, clock: ManualClock
) -> None:
    chat = fake_telegram.private
    fake_telegram.fail_next("sendMessage", 429, "Too Many Requests: retry after 30", retry_after=30)
    await fake_telegram.user_says(chat, "ada", "hello")

    async def tried_once() -> bool:
        posts = await deliveries_of(parley, "channel_post")
        return len(posts) == 1 and posts[0]["state"] == "pending" and bool(posts[0]["last_error"])

    assert await eventually(tried_once)
    row = await account_row(parley)
    assert moment(row["rate_limited_until"]) == clock.now() + timedelta(seconds=30)
    assert "wait 30 s" in row["last_error"]
    (post,) = await deliveries_of(parley, "channel_post")
    assert moment(post["next_attempt_at"]) >= clock.now() + timedelta(seconds=30)

    async def delivered() -> bool:
        clock.advance(seconds=10)
        parley.context.runtime.outbox.wake()
        return await settled(parley, "channel_post", 1)

    assert await eventually(delivered)
    assert fake_telegram.state.texts(chat.id) == ["hello", "echo: hello"]
    assert [c.status for c in fake_telegram.state.calls_to("sendMessage")] == [429, 200]
    assert (await account_row(parley))["rate_limited_until"] is None


async def test_a_flood_limit_says_how_long_to_wait(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_next("sendMessage", 429, "Too Many Requests", retry_after=7)
    with pytest.raises(Unavailable) as raised:
        await adapter(parley).post(place(fake_telegram.group.id), "soon", None, "k:429")
    assert raised.value.fields["retry_after_seconds"] == 7.0


async def test_a_refused_token_is_final_and_the_account_shows_refused(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_next("sendMessage", 401, "Unauthorized")
    with pytest.raises(Unauthorized, match="parley channel account token"):
        await adapter(parley).post(place(fake_telegram.group.id), "no", None, "k:401")
    assert (await account_row(parley))["state"] == "refused"
    # a token Telegram does not know: the poll is refused, and so is the account
    await call(parley, "PUT", TOKEN, token="1001:not-the-token")

    async def refused() -> bool:
        row = await account_row(parley)
        return row["state"] == "refused" and "refused the bot's token" in row["last_error"]

    assert await eventually(refused)
    with pytest.raises(Unauthorized):
        await adapter(parley).post(place(fake_telegram.group.id), "no", None, "k:401b")
    assert fake_telegram.state.texts(fake_telegram.group.id) == []
    # The bot whose getMe was refused was shut down: none of its connections is left to the GC.
    assert not unclosed_connections_to(fake_telegram.url)


def unclosed_connections_to(url: str) -> list[str]:
    """The ResourceWarnings of sockets to ``url`` that a full collection finds left open."""
    port = url.rsplit(":", 1)[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        gc.collect()
    said = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    return [line for line in said if f"'127.0.0.1', {port})" in line]


async def test_a_blocked_bot_is_final(parley: Harness, fake_telegram: FakeTelegram) -> None:
    fake_telegram.fail_next("sendMessage", 403, "Forbidden: bot was blocked by the user")
    with pytest.raises(Forbidden, match="blocked"):
        await adapter(parley).post(place(fake_telegram.private.id), "no", None, "k:403")


async def test_a_server_error_or_a_cut_connection_is_retried_and_posts_once(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    group = place(fake_telegram.group.id)
    fake_telegram.fail_next("sendMessage", 500, "Internal Server Error")
    with pytest.raises(Unavailable):
        await adapter(parley).post(group, "again", None, "k:cut")
    fake_telegram.drop_next("sendMessage")
    with pytest.raises(Unavailable):
        await adapter(parley).post(group, "again", None, "k:cut")
    await adapter(parley).post(group, "again", None, "k:cut")
    await adapter(parley).post(group, "again", None, "k:cut")  # known: nothing sent
    assert fake_telegram.state.texts(fake_telegram.group.id) == ["again"]
    assert [c.status for c in fake_telegram.state.calls_to("sendMessage")] == [500, 0, 200]


async def test_an_answer_lost_after_telegram_took_the_post_is_posted_again(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    """What remains of exactly-once on Telegram (no idempotency key, no history to read)."""
    group = place(fake_telegram.group.id)
    fake_telegram.drop_next("sendMessage", after=True)
    with pytest.raises(Unavailable):
        await adapter(parley).post(group, "twice", None, "k:lost")
    await adapter(parley).post(group, "twice", None, "k:lost")
    assert fake_telegram.state.texts(fake_telegram.group.id) == ["twice", "twice"]


async def test_without_a_token_a_post_is_refused_and_the_poll_ends(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    await call(parley, "DELETE", TOKEN)
    with pytest.raises(Forbidden, match="parley channel account token telegram bot"):
        await adapter(parley).post(place(fake_telegram.group.id), "hi", None, "k:none")
    assert fake_telegram.state.calls_to("sendMessage") == []

    async def ended() -> bool:
        return bool((await account_row(parley))["state"] == "no-token")

    assert await eventually(ended)
    polls = len(fake_telegram.state.calls_to("getUpdates"))
    await fake_telegram.user_says(fake_telegram.private, "ada", "anyone?")
    await call(parley, "PUT", TOKEN, token=fake_telegram.token)  # given back: polled again
    await fake_telegram.wait_until(
        lambda: "echo: anyone?" in fake_telegram.state.texts(fake_telegram.private.id)
    )
    assert len(fake_telegram.state.calls_to("getUpdates")) > polls


async def test_a_cut_or_conflicting_long_poll_is_shown_and_polled_again(
    parley: Harness, fake_telegram: FakeTelegram
) -> None:
    fake = fake_telegram
    fake.drop_next("getUpdates")
    fake.fail_next("getUpdates", 409, "Conflict: terminated by other getUpdates request")

    async def shown() -> bool:
        row = await account_row(parley)
        return "another poller or a webhook" in str(row["last_error"])

    assert await eventually(shown)
    await fake.user_says(fake.private, "ada", "back?")
    await fake.wait_until(lambda: "echo: back?" in fake.state.texts(fake.private.id))
    assert (await account_row(parley))["state"] == "connected"
    statuses = [c.status for c in fake.state.calls_to("getUpdates")]
    assert 0 in statuses and 409 in statuses
