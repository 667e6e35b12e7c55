"""How the Slack adapter's sends go wrong, against the fake through slack_sdk: a rate limit
(429 with Retry-After) is ``Unavailable`` with Slack's wait, shown on the account and waited out
by the outbox; a server error or a cut connection is ``Unavailable``; a refused token is final
and the account shows refused; a refused persona goes plain; a bound channel Slack no longer
has ends its binding; a post without a token is refused with how to set one, and the socket
closes; tokens are checked as two words and never shown."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from parley.channels.sweeper import sweep_bindings
from parley.errors import Forbidden, NotFound, Unauthorized, Unavailable
from parley.settings import Settings
from tests.channels.slack.fake_slack import FakeSlack
from tests.channels.slack.on_slack import (
    ACCOUNT,
    account_row,
    adapter,
    moment,
    on_slack,
    place,
    scribe_on,
)
from tests.channels.test_bound_completions import deliveries_of, settled
from tests.support import Harness, ManualClock, call, eventually

POST = "chat.postMessage"


@pytest.fixture
def settings(settings: Settings, fake_slack: FakeSlack) -> Settings:
    return on_slack(settings, False, fake_slack, idle_timeout=3600)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_slack: FakeSlack, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_slack, tmp_path) as harness:
        yield harness


async def test_a_rate_limit_says_how_long_and_the_account_shows_it(
    parley: Harness, fake_slack: FakeSlack, clock: ManualClock
) -> None:
    fake_slack.fail_next(POST, retry_after=7)
    with pytest.raises(Unavailable) as raised:
        await adapter(parley).post(place(), "patience", None, "k:429")
    assert raised.value.fields["retry_after_seconds"] == 7
    row = await account_row(parley)
    assert moment(row["rate_limited_until"]) == clock.now() + timedelta(seconds=7)
    assert row["state"] == "connected"
    await adapter(parley).post(place(), "patience", None, "k:429")
    assert fake_slack.texts() == ["patience"]


async def test_the_outbox_waits_a_rate_limit_out(
    parley: Harness, fake_slack: FakeSlack, clock: ManualClock
) -> None:
    fake_slack.fail_next(POST, retry_after=30)
    await fake_slack.user_says("ada", "hello")

    async def waiting() -> bool:
        posts = await deliveries_of(parley, "channel_post")
        return [(p["attempts"], p["state"]) for p in posts] == [(1, "pending")]

    assert await eventually(waiting)
    (post,) = await deliveries_of(parley, "channel_post")
    assert moment(post["next_attempt_at"]) >= clock.now() + timedelta(seconds=30)
    assert fake_slack.texts() == []

    async def delivered() -> bool:
        clock.advance(seconds=60)  # past the wait (and any backoff)
        parley.context.runtime.outbox.wake()
        return await settled(parley, "channel_post", 1)

    assert await eventually(delivered)
    assert fake_slack.texts() == ["echo: hello"]
    assert [c.status for c in fake_slack.calls_to(POST)] == [429, 200]


async def test_a_server_error_or_a_cut_connection_is_unavailable(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    fake_slack.fail_next(POST, "internal_error", status=500)
    with pytest.raises(Unavailable, match="away for a moment"):
        await adapter(parley).post(place(), "hi", None, "k:500")
    fake_slack.drop_next(POST)
    with pytest.raises(Unavailable, match="could not be reached"):
        await adapter(parley).post(place(), "hi", None, "k:500")
    await adapter(parley).post(place(), "hi", None, "k:500")
    assert fake_slack.texts() == ["hi"]


async def test_a_refused_token_is_final_and_the_account_shows_refused(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    fake_slack.fail_next(POST, "token_revoked")
    with pytest.raises(Unauthorized, match="parley channel account token"):
        await adapter(parley).post(place(), "no", None, "k:401")
    row = await account_row(parley)
    assert row["state"] == "refused" and "token_revoked" in row["last_error"]


async def test_a_token_refused_at_connection_shows_refused_and_opens_no_socket(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    fake_slack.rotate_tokens()  # Parley's tokens are now unknown to Slack
    opened = fake_slack.connections
    await fake_slack.drop_sockets()

    async def refused() -> bool:
        return bool((await account_row(parley))["state"] == "refused")

    assert await eventually(refused)
    assert fake_slack.connections == opened
    assert fake_slack.calls_to("auth.test")[-1].error == "invalid_auth"
    # a new secret given: the account connects again
    await call(parley, "PUT", f"/channels/slack/accounts/{ACCOUNT}/token", token=fake_slack.secret)
    await fake_slack.wait_until(lambda: fake_slack.connections > opened)


async def test_other_refusals_are_final(parley: Harness, fake_slack: FakeSlack) -> None:
    fake_slack.fail_next(POST, "not_in_channel")
    with pytest.raises(Forbidden, match="not_in_channel"):
        await adapter(parley).post(place(), "no", None, "k:403")
    with pytest.raises(NotFound, match="channel_not_found"):
        await adapter(parley).post(place("C0NOWHERE"), "no", None, "k:404")
    assert fake_slack.texts() == []


async def test_a_refused_persona_goes_plain(parley: Harness, fake_slack: FakeSlack) -> None:
    fake_slack.fail_next(POST, "missing_scope")
    await adapter(parley).post(place(), "plainly", "scribe", "k:persona")
    (posted,) = fake_slack.posts()
    assert (posted.text, posted.username) == ("plainly", None)
    await adapter(parley).post(place(), "still plain", "scribe", "k:persona2")
    assert [p.username for p in fake_slack.posts()] == [None, None]


async def test_a_bound_channel_slack_no_longer_has_ends_its_binding(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    envelope = await fake_slack.run_command("ada", "/focus", "scribe")
    await fake_slack.wait_until(lambda: envelope in fake_slack.acks)
    fake_slack.channels[place().conversation_id]["archived"] = True
    with pytest.raises(NotFound, match="is_archived"):
        await adapter(parley).post(place(), "hi", "scribe", "k:gone")
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert (binding["status"], binding["ended_reason"]) == ("ended", "thread-deleted")


async def test_without_a_token_a_post_is_refused_with_how_to_set_one(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    await call(parley, "DELETE", f"/channels/slack/accounts/{ACCOUNT}/token")
    with pytest.raises(Forbidden, match="parley channel account token slack app"):
        await adapter(parley).post(place(), "hi", None, "k:none")
    assert fake_slack.calls_to(POST) == []
    await fake_slack.wait_until(lambda: not fake_slack.sockets)  # the session ended
    assert (await account_row(parley))["state"] == "no-token"


async def test_tokens_are_checked_as_two_words_and_never_shown(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    token = f"/api/v1/channels/slack/accounts/{ACCOUNT}/token"
    bot, app = fake_slack.secret.split()
    for bad in (bot, app, f"{bot} {bot}", f"{bot} {app} extra", "", f"{bot} xapp-\x00"):
        response = await parley.owner.put(token, json={"token": bad})
        assert response.status_code == 400, bad
    assert (await parley.owner.put(token, json={"token": f"{app}\n{bot}\n"})).status_code < 300
    shown = await parley.owner.get("/api/v1/channels/accounts")
    assert bot not in shown.text and app not in shown.text


async def test_an_idle_bound_channel_gets_a_farewell_from_the_sweep(
    parley: Harness, fake_slack: FakeSlack, clock: ManualClock
) -> None:
    envelope = await fake_slack.run_command("ada", "/focus", "scribe")
    await fake_slack.wait_until(lambda: envelope in fake_slack.acks)
    clock.advance(minutes=59)
    assert await sweep_bindings(parley.context.store, clock) == []
    clock.advance(minutes=1)  # an hour idle: the idle timeout set
    assert len(await sweep_bindings(parley.context.store, clock)) == 1
    await fake_slack.wait_until(lambda: len(fake_slack.posts()) == 1)
    (farewell,) = fake_slack.posts()
    assert "idle-timeout" in farewell.text
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["ended_reason"] == "idle-timeout"
