"""The Matrix channel against the fake homeserver, mautrix in between, Parley in process (SQLite
and PostgreSQL): a linked person's message reaches the default agent and its reply comes back in
the same room or thread; an unknown user is refused with a post; what is not a person's text
(the bot's own, other bots' notices, other events, edits, redactions) is never taken; a repeated
or retried post with the same key posts once (Matrix transaction ids); the newest token after a
rotation is used; sends record activity."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from parley.errors import Unavailable
from parley.settings import Settings
from tests.channels.matrix.fake_matrix import BOT, FakeMatrix
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


async def said_to_scribe(parley: Harness) -> list[str]:
    conversation = await call(parley, "GET", "/conversations/scribe")
    return [m["body"] for m in conversation["messages"]["items"] if m["kind"] == "text"]


async def test_a_person_s_message_is_answered_in_its_room(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = fake_matrix.room.room_id
    await fake_matrix.user_says(general, "ada", "hello")
    await fake_matrix.wait_until(lambda: fake_matrix.texts(general) == ["echo: hello"])
    (answer,) = fake_matrix.sent(general)
    assert answer["type"] == "m.room.message" and answer["content"]["msgtype"] == "m.text"
    (send,) = fake_matrix.calls_to("send")
    assert send.txn is not None and send.txn.startswith("parley-")

    async def posted_recorded() -> bool:
        return (await account_row(parley))["last_outbound_at"] is not None

    assert await eventually(posted_recorded)
    row = await account_row(parley)
    assert row["has_token"] is True and row["state"] == "connected"
    first_sync = fake_matrix.calls_to("sync")[0]  # asked for as little history as can be
    assert first_sync.since is None and '"limit": 1' in str(first_sync.filter)
    assert row["last_inbound_at"] is not None


async def test_a_message_in_a_thread_is_answered_in_the_thread(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = fake_matrix.room.room_id
    root = await fake_matrix.user_says(general, "ada", "a topic")
    await fake_matrix.wait_until(lambda: len(fake_matrix.texts(general)) == 1)
    await fake_matrix.user_says(general, "ada", "in the thread", thread=root)
    await fake_matrix.wait_until(
        lambda: fake_matrix.texts(general, root) == ["echo: in the thread"]
    )
    assert fake_matrix.texts(general) == ["echo: a topic"]  # the main timeline has no more


async def test_a_repeated_post_with_the_same_key_posts_once(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = place(fake_matrix.room.room_id)
    first = await adapter(parley).post(general, "once", None, "reply:42")
    again = await adapter(parley).post(general, "once", None, "reply:42")
    assert first == again
    assert fake_matrix.texts(fake_matrix.room.room_id) == ["once"]
    assert [c.status for c in fake_matrix.calls_to("send")] == [200, 200]


async def test_a_retried_send_whose_answer_was_lost_posts_once(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = place(fake_matrix.room.room_id)
    # Twice the homeserver stores the event and the answer is lost (aiohttp may itself try a
    # cut PUT again once, on a reused connection; the outbox tries again after Unavailable).
    fake_matrix.drop_next("send", times=2)
    sent = None
    for _ in range(3):
        with contextlib.suppress(Unavailable):
            sent = await adapter(parley).post(general, "again", None, "k:cut")
            break
    assert fake_matrix.texts(fake_matrix.room.room_id) == ["again"]
    assert sent == fake_matrix.sent(fake_matrix.room.room_id)[0]["event_id"]
    assert [c.status for c in fake_matrix.calls_to("send")] == [0, 0, 200]


async def test_long_text_goes_in_parts_each_with_its_own_transaction(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = place(fake_matrix.room.room_id)
    text = "x" * 8000 + "y" * 8000 + "z"
    await adapter(parley).post(general, text, None, "k:long")
    await adapter(parley).post(general, text, None, "k:long")
    assert "".join(fake_matrix.texts(fake_matrix.room.room_id)) == text
    txns = [c.txn for c in fake_matrix.calls_to("send")]
    assert len(set(txns)) == 3 and len(txns) == 6


async def test_an_unknown_user_is_refused_and_what_is_not_text_is_ignored(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = fake_matrix.room.room_id
    await fake_matrix.user_says(general, "stranger", "let me in")
    await fake_matrix.user_says(general, "otherbot", "beep", msgtype="m.notice")
    await fake_matrix.event(general, fake_matrix.user("ada"), "m.reaction", {})
    await fake_matrix.event(general, BOT, "m.room.message", {"msgtype": "m.text", "body": "me"})
    first = await fake_matrix.user_says(general, "ada", "hello")
    await fake_matrix.user_edits(general, "ada", first, "hello, edited")
    await fake_matrix.redact(general, "ada", first)
    await fake_matrix.user_says(general, "ada", "after")
    await fake_matrix.wait_until(lambda: "after" in "".join(fake_matrix.texts(general)))
    mine, refusal, *answers = fake_matrix.texts(general)
    assert mine == "me"
    assert f"matrix user {fake_matrix.user('stranger')}" in refusal
    # the agent may take both in one turn: its answers name only what ada said
    assert "\n".join(answers) == "echo: hello\necho: after"
    assert sorted(await said_to_scribe(parley)) == ["after", "hello"]


async def test_reusing_the_adapter_uses_the_newest_token_after_rotation(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = place(fake_matrix.room.room_id)
    used = adapter(parley)
    old = fake_matrix.token
    await used.post(general, "before", None, "k:1")
    new = fake_matrix.rotate_token()
    await call(parley, "PUT", f"{ACCOUNT_PATH}/token", token=new)
    reused = adapter(parley)
    assert reused is used
    await reused.post(general, "after", None, "k:2")
    sends = fake_matrix.calls_to("send")
    assert [(c.token, c.status) for c in sends] == [(old, 200), (new, 200)]
    # the listener follows the rotation too: what is said now is heard and answered
    await fake_matrix.user_says(fake_matrix.room.room_id, "ada", "still there?")
    await fake_matrix.wait_until(
        lambda: "echo: still there?" in fake_matrix.texts(fake_matrix.room.room_id)
    )


async def test_a_repeated_create_thread_makes_one_thread(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = place(fake_matrix.room.room_id)
    fake_matrix.drop_next("send")  # the first intro is stored, its answer lost
    made = None
    for _ in range(3):
        with contextlib.suppress(Unavailable):
            made = await adapter(parley).create_thread(general, "ann: task 7", "thread:7")
            break
    again = await adapter(parley).create_thread(general, "ann: task 7", "thread:7")
    (intro,) = fake_matrix.sent(fake_matrix.room.room_id)
    assert made == again == place(fake_matrix.room.room_id, intro["event_id"])
    assert intro["content"]["body"].startswith("ann: task 7")
    await adapter(parley).post(again, "in it", "ann", "k:in")
    assert fake_matrix.texts(fake_matrix.room.room_id, intro["event_id"]) == ["in it"]


async def test_a_reply_s_quoted_fallback_is_not_taken_as_what_was_said(
    parley: Harness, fake_matrix: FakeMatrix
) -> None:
    general = fake_matrix.room.room_id
    first = await fake_matrix.user_says(general, "ada", "one")
    await fake_matrix.wait_until(lambda: len(fake_matrix.texts(general)) == 1)
    reply: dict[str, Any] = {"m.relates_to": {"m.in_reply_to": {"event_id": first}}}
    await fake_matrix.user_says(general, "ada", "> <@ada:fake.test> one\n\ntwo", **reply)
    await fake_matrix.wait_until(lambda: fake_matrix.texts(general)[-1] == "echo: two")
    assert sorted(await said_to_scribe(parley)) == ["one", "two"]
