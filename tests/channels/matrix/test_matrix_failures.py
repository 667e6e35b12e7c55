"""How the Matrix adapter's sends and syncs go wrong, against the fake homeserver through
mautrix: a 429 with ``retry_after_ms`` is waited out by the outbox and the account shows it
rate-limited; a 401 is final and the account shows refused; 403 and 500 are final and transient;
a thread whose root is gone, or a room the bot was removed from, ends its binding; a post
without a token is refused with how to set one and the listener stops."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.channels.sweeper import sweep_bindings
from parley.errors import Forbidden, NotFound, Unauthorized, Unavailable
from parley.settings import Settings
from tests.channels.matrix.fake_matrix import FakeMatrix
from tests.channels.matrix.on_matrix import (
    ACCOUNT_PATH,
    account_row,
    adapter,
    on_matrix,
    place,
    scribe_on,
)
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def settings(settings: Settings, fake_matrix: FakeMatrix) -> Settings:
    return on_matrix(settings, False, fake_matrix)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_matrix: FakeMatrix, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_matrix, tmp_path) as harness:
        yield harness


async def focused_thread(fake: FakeMatrix) -> str:
    room = fake.room.room_id
    root = await fake.user_says(room, "ada", "with scribe")
    await fake.wait_until(lambda: len(fake.texts(room)) == 1)
    await fake.user_says(room, "ada", "!focus scribe", thread=root)
    await fake.wait_until(lambda: len(fake.texts(room, root)) == 1)
    return root


async def test_a_rate_limit_is_waited_out_and_shown(
    parley: Harness, fake_matrix: FakeMatrix, clock: ManualClock
) -> None:
    general = fake_matrix.room.room_id
    fake_matrix.fail_next("send", 429, retry_after_ms=30_000)
    await fake_matrix.user_says(general, "ada", "patience")

    async def limited() -> bool:
        return (await account_row(parley))["rate_limited_until"] is not None

    assert await eventually(limited)
    row = await account_row(parley)
    assert row["rate_limited_until"] is not None
    assert fake_matrix.texts(general) == []
    clock.advance(seconds=31)

    async def answered() -> bool:
        parley.context.runtime.outbox.wake()  # its worker sleeps in real time; this clock moved
        return fake_matrix.texts(general) == ["echo: patience"]

    assert await eventually(answered)
    assert [c.status for c in fake_matrix.calls_to("send")] == [429, 200]
    assert (await account_row(parley))["rate_limited_until"] is None  # past it now


async def test_the_adapter_says_429_as_unavailable_with_the_wait(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    fake_matrix.fail_next("send", 429, retry_after_ms=2500)
    with pytest.raises(Unavailable) as raised:
        await adapter(parley).post(place(fake_matrix.room.room_id), "hi", None, "k:429")
    assert raised.value.fields["retry_after_seconds"] == 2.5


async def test_refusals_are_final_and_a_server_error_is_not(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = place(fake_matrix.room.room_id)
    fake_matrix.fail_next("send", 403)
    with pytest.raises(Forbidden, match="M_FORBIDDEN"):
        await adapter(parley).post(general, "no", None, "k:403")
    fake_matrix.fail_next("send", 401)
    with pytest.raises(Unauthorized):
        await adapter(parley).post(general, "no", None, "k:401")
    fake_matrix.fail_next("send", 500)
    with pytest.raises(Unavailable):
        await adapter(parley).post(general, "later", None, "k:500")
    await adapter(parley).post(general, "later", None, "k:500")
    assert fake_matrix.texts(general.conversation_id) == ["later"]


async def test_a_token_the_homeserver_refuses_shows_the_account_refused(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    fake_matrix.rotate_token()  # Parley was not told: its token is refused now

    async def refused() -> bool:
        return bool((await account_row(parley))["state"] == "refused")

    assert await eventually(refused)
    assert "refused the access token" in (await account_row(parley))["last_error"]
    with pytest.raises(Unauthorized):
        await adapter(parley).post(place(fake_matrix.room.room_id), "no", None, "k:old")


async def test_a_thread_whose_root_is_gone_ends_its_binding(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    root = await focused_thread(fake_matrix)
    await fake_matrix.redact(fake_matrix.room.room_id, "ada", root)
    with pytest.raises(NotFound):
        await adapter(parley).post(place(fake_matrix.room.room_id, root), "hi", "scribe", "k:1")
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert (binding["status"], binding["ended_reason"]) == ("ended", "thread-deleted")


async def test_a_room_the_bot_was_removed_from_ends_its_binding(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    root = await focused_thread(fake_matrix)
    fake_matrix.kick(fake_matrix.room.room_id)
    with pytest.raises(Forbidden):
        await adapter(parley).post(place(fake_matrix.room.room_id, root), "hi", "scribe", "k:2")
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["status"] == "ended"


async def test_sends_record_activity_and_touch_the_binding(
    parley: Harness, fake_matrix: FakeMatrix, clock: ManualClock
) -> None:
    root = await focused_thread(fake_matrix)
    (before,) = (await call(parley, "GET", "/bindings"))["items"]
    clock.advance(hours=1)
    await adapter(parley).post(place(fake_matrix.room.room_id, root), "hi", "scribe", "k:3")
    row = await account_row(parley)
    assert row["last_outbound_at"] is not None
    (touched,) = (await call(parley, "GET", "/bindings"))["items"]
    assert touched["last_activity_at"] > before["last_activity_at"]


async def test_without_a_token_a_post_is_refused_and_the_listener_stops(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    await call(parley, "DELETE", f"{ACCOUNT_PATH}/token")
    with pytest.raises(Forbidden, match="parley channel account token matrix"):
        await adapter(parley).post(place(fake_matrix.room.room_id), "hi", None, "k:none")
    assert fake_matrix.calls_to("send") == []

    async def stopped() -> bool:
        return bool((await account_row(parley))["state"] == "no-token")

    assert await eventually(stopped)


async def test_an_account_named_otherwise_than_its_token_s_user_is_refused(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    other = "/channels/matrix/accounts/%40someone%3Afake.test"
    await call(parley, "PUT", other, default_agent="scribe")
    await call(parley, "PUT", f"{other}/token", token=fake_matrix.token)

    async def refused() -> bool:
        rows = await call(parley, "GET", "/channels/accounts")
        (row,) = [r for r in rows if r["account_id"] == "@someone:fake.test"]
        return bool(row["state"] == "refused" and "not @someone" in str(row["last_error"]))

    assert await eventually(refused)


async def test_a_failed_sync_reconnects_and_keeps_its_place(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = fake_matrix.room.room_id
    fake_matrix.fail_next("sync", 500)
    await fake_matrix.user_says(general, "ada", "first")  # ends the poll; the next one fails
    await fake_matrix.wait_until(lambda: len(fake_matrix.calls_to("whoami")) == 2)
    await fake_matrix.user_says(general, "ada", "second")
    await fake_matrix.wait_until(lambda: "echo: second" in "\n".join(fake_matrix.texts(general)))
    syncs = fake_matrix.calls_to("sync")
    assert 500 in [c.status for c in syncs]
    # only the very first sync started afresh: the reconnection resumed where it was
    assert [c.since is None for c in syncs].count(True) == 1 and syncs[0].since is None
    assert "500" in str((await account_row(parley))["last_error"])


async def test_a_rate_limited_sync_is_waited_out_and_shown(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = fake_matrix.room.room_id
    fake_matrix.fail_next("sync", 429, retry_after_ms=50)
    await fake_matrix.user_says(general, "ada", "first")  # ends the poll; the next one is 429
    await fake_matrix.wait_until(lambda: 429 in [c.status for c in fake_matrix.calls_to("sync")])
    await fake_matrix.user_says(general, "ada", "second")
    await fake_matrix.wait_until(lambda: "echo: second" in "\n".join(fake_matrix.texts(general)))
    row = await account_row(parley)
    assert row["rate_limited_until"] is not None and row["state"] == "connected"
    assert len(fake_matrix.calls_to("whoami")) == 1  # waited, not reconnected


async def test_tokens_are_checked_and_never_shown(parley: Harness, fake_matrix: FakeMatrix) -> None:
    for bad in ("two words", "", "x" * 501, "nul\x00"):
        response = await parley.owner.put(f"/api/v1{ACCOUNT_PATH}/token", json={"token": bad})
        assert response.status_code == 400, bad
    shown = await parley.owner.get("/api/v1/channels/accounts")
    assert fake_matrix.token not in shown.text


async def test_an_idle_bound_thread_gets_a_farewell_from_the_sweep(
    settings: Settings, clock: ManualClock, fake_matrix: FakeMatrix, tmp_path: Path
) -> None:
    idle = on_matrix(settings, False, fake_matrix, idle_timeout=3600)
    async with scribe_on(idle, clock, fake_matrix, tmp_path) as parley:
        root = await focused_thread(fake_matrix)
        clock.advance(minutes=59)
        assert await sweep_bindings(parley.context.store, clock) == []
        clock.advance(minutes=1)
        assert len(await sweep_bindings(parley.context.store, clock)) == 1
        room = fake_matrix.room.room_id
        await fake_matrix.wait_until(lambda: len(fake_matrix.texts(room, root)) == 2)
        assert "idle-timeout" in fake_matrix.texts(room, root)[1]
        (binding,) = (await call(parley, "GET", "/bindings"))["items"]
        assert binding["ended_reason"] == "idle-timeout"
