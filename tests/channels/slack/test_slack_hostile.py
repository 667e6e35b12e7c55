"""Hostile and odd input over Socket Mode, against the fake Slack, Parley in process: a 100 KB
message and one with NUL bytes are refused with a post and nothing of them is stored; events of
another workspace, events whose ids are not Slack's shapes, events of kinds Parley does not take
and frames that are not JSON are ignored with a log line (each envelope still acknowledged):
nothing is stored, nothing is posted, and the socket stays up."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from parley.settings import Settings
from tests.channels.slack.fake_slack import GENERAL, PEOPLE, FakeSlack
from tests.channels.slack.on_slack import on_slack, scribe_on
from tests.support import Harness, ManualClock, call

ADA = PEOPLE["ada"]


@pytest.fixture
def settings(settings: Settings, fake_slack: FakeSlack) -> Settings:
    return on_slack(settings, False, fake_slack)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_slack: FakeSlack, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_slack, tmp_path) as harness:
        yield harness


async def nothing_stored_but_a_refusal(parley: Harness) -> None:
    """No conversation started, nothing queued: the one delivery is bea's refusal."""
    topics = await call(parley, "GET", "/conversations")
    assert all(t["agent"] != "scribe" for t in topics["items"]), topics
    deliveries = (await call(parley, "GET", "/deliveries"))["items"]
    assert [d["kind"] for d in deliveries] == ["channel_post"]


async def test_a_100_kb_message_and_nul_bytes_are_ignored_and_nothing_is_stored(
    parley: Harness, fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    envelopes = [
        await fake_slack.push_event(
            {"type": "message", "channel": GENERAL, "user": ADA, "text": text, "ts": f"1.{n}"}
        )
        for n, text in enumerate(["x" * 100_000, "nul\x00inside"])
    ]
    await fake_slack.wait_until(lambda: all(e in fake_slack.acks for e in envelopes))
    await fake_slack.user_says("ada", "a fair one")
    await fake_slack.wait_until(lambda: len(fake_slack.posts()) == 1)
    assert fake_slack.texts() == ["echo: a fair one"]
    conversation = await call(parley, "GET", "/conversations/scribe")
    assert [m["body"] for m in conversation["messages"]["items"] if m["kind"] == "text"] == [
        "a fair one"
    ]
    assert caplog.text.count("is no Slack text (too long or NUL), ignored") == 2


async def test_events_parley_does_not_take_are_ignored_and_nothing_is_stored(
    parley: Harness, fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    good: dict[str, Any] = {"type": "message", "channel": GENERAL, "user": ADA,
                            "text": "hello", "ts": "1.000001"}  # fmt: skip
    envelopes = [
        await fake_slack.push_event(good, team="T0SOMEONEELSE"),  # another workspace
        await fake_slack.push_event({**good, "channel": "../../etc"}),
        await fake_slack.push_event({**good, "channel": "C0GENERAL\x00"}),
        await fake_slack.push_event({**good, "user": None}),
        await fake_slack.push_event({**good, "ts": "soon"}),
        await fake_slack.push_event({**good, "thread_ts": "x" * 300}),
        await fake_slack.push_event({**good, "text": {"not": "text"}}),
        await fake_slack.push_event({"type": "reaction_added", "user": ADA}),
        await fake_slack.push("interactive", {"type": "block_actions"}),
        await fake_slack.push("events_api", {"event": "not an object"}),
    ]
    await fake_slack.send_raw("{not json")
    await fake_slack.send_raw("not even braces")
    await fake_slack.wait_until(lambda: all(e in fake_slack.acks for e in envelopes))
    # the socket is still up and reads the next message
    await fake_slack.user_says("bea", "after all that")
    await fake_slack.wait_until(lambda: len(fake_slack.posts()) == 1)
    (refusal,) = fake_slack.texts()  # bea is not linked: the only post is her refusal
    assert f"slack user {PEOPLE['bea']}" in refusal
    await nothing_stored_but_a_refusal(parley)
    logged = caplog.text
    assert "an event of workspace 'T0SOMEONEELSE' ignored" in logged
    assert logged.count("a malformed message event ignored") == 6
    assert "a interactive envelope ignored" in logged


async def test_a_command_from_another_workspace_is_refused(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    payload = {"command": "/focus", "text": "scribe", "user_id": ADA, "channel_id": GENERAL,
               "team_id": "T0SOMEONEELSE"}  # fmt: skip
    envelope = await fake_slack.push("slash_commands", payload, accepts_response_payload=True)
    await fake_slack.wait_until(lambda: envelope in fake_slack.acks)
    answer = fake_slack.acks[envelope]
    assert answer is not None and "another workspace" in answer["text"]
    assert (await call(parley, "GET", "/bindings"))["items"] == []


async def test_an_event_delivered_again_is_one_message(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    event = {"type": "message", "channel": GENERAL, "user": ADA, "text": "once", "ts": "7.000001"}
    first = await fake_slack.push_event(event)
    again = await fake_slack.push_event(event)  # Slack's retry: the ack did not reach it
    await fake_slack.wait_until(lambda: {first, again} <= set(fake_slack.acks))
    await fake_slack.wait_until(lambda: len(fake_slack.posts()) == 1)
    await fake_slack.user_says("ada", "then")
    await fake_slack.wait_until(lambda: len(fake_slack.posts()) == 2)
    assert fake_slack.texts() == ["echo: once", "echo: then"]
