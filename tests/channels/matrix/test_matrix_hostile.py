"""Hostile or broken input from the homeserver side, against the fake through mautrix, Parley
in process: a 100 KB message and NUL bytes are refused with a post and nothing is queued;
forged events (of rooms the bot has not joined, malformed ids, senders, threads, bodies) are
ignored and nothing is stored; invites are accepted from linked people only."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from parley.settings import Settings
from tests.channels.matrix.fake_matrix import FakeMatrix
from tests.channels.matrix.on_matrix import on_matrix, scribe_on
from tests.support import Harness, ManualClock


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
    response = await parley.owner.get("/api/v1/conversations/scribe")
    if response.status_code == 404:  # nothing was ever said to it
        return []
    conversation = response.json()
    return [m["body"] for m in conversation["messages"]["items"] if m["kind"] == "text"]


@pytest.mark.parametrize("text", ["x" * 100_001, "nul\x00byte"])  # over 100 KB; a NUL
async def test_a_huge_or_nul_message_is_refused_with_a_post(
    parley: Harness, fake_matrix: FakeMatrix, text: str
) -> None:
    general = fake_matrix.room.room_id
    await fake_matrix.user_says(general, "ada", text)
    await fake_matrix.wait_until(lambda: len(fake_matrix.texts(general)) == 1)
    (refusal,) = fake_matrix.texts(general)
    assert refusal.startswith("Parley could not take that:")
    assert await said_to_scribe(parley) == []


def forged(fake: FakeMatrix, **fields: Any) -> dict[str, Any]:
    made: dict[str, Any] = {"type": "m.room.message", "sender": fake.user("ada"),
                            "event_id": "$forged", "content": {"msgtype": "m.text",
                                                               "body": "forged"}}  # fmt: skip
    made.update(fields)
    return made


async def test_forged_and_malformed_events_are_ignored_and_nothing_is_stored(
    parley: Harness, fake_matrix: FakeMatrix, caplog: pytest.LogCaptureFixture
) -> None:
    general = fake_matrix.room.room_id
    caplog.set_level(logging.INFO, logger="parley.channels.matrix")
    await fake_matrix.forge("!other:fake.test", forged(fake_matrix), section="leave")
    await fake_matrix.forge("!other:fake.test", forged(fake_matrix), section="invite")
    await fake_matrix.forge("general-without-sigil", forged(fake_matrix))
    for bad in (
        forged(fake_matrix, sender="ada"),
        forged(fake_matrix, sender=None),
        forged(fake_matrix, event_id=None),
        forged(fake_matrix, event_id="$" + "x" * 300),
        forged(fake_matrix, content="not an object"),
        forged(fake_matrix, content={"msgtype": "m.text", "body": ["not", "text"]}),
        forged(
            fake_matrix,
            content={
                "msgtype": "m.text",
                "body": "t",
                "m.relates_to": {"rel_type": "m.thread", "event_id": "no-sigil"},
            },
        ),
        forged(fake_matrix, type="m.room.member", state_key=fake_matrix.user("ada")),
    ):
        await fake_matrix.forge(general, bad)
    await fake_matrix.forge(general, "not an event")  # type: ignore[arg-type]
    await fake_matrix.user_says(general, "ada", "real")
    await fake_matrix.wait_until(lambda: fake_matrix.texts(general) == ["echo: real"])
    assert await said_to_scribe(parley) == ["real"]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "malformed" in logged


async def test_an_invite_is_accepted_from_a_linked_person_only(
    parley: Harness, fake_matrix: FakeMatrix, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="parley.channels.matrix")
    await fake_matrix.invite("!evil:fake.test", "stranger")
    await fake_matrix.invite("!side:fake.test", "ada")
    await fake_matrix.wait_until(lambda: [c.status for c in fake_matrix.calls_to("join")] == [200])
    assert "!side:fake.test" not in fake_matrix.invited
    assert "!evil:fake.test" in fake_matrix.invited  # never joined
    assert any("invite to !evil:fake.test" in r.getMessage() for r in caplog.records)
    fake_matrix.rooms["!side:fake.test"].members.add(fake_matrix.user("ada"))
    await fake_matrix.user_says("!side:fake.test", "ada", "over here")
    await fake_matrix.wait_until(
        lambda: fake_matrix.texts("!side:fake.test") == ["echo: over here"]
    )
