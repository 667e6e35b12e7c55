"""``!focus`` and ``!unfocus`` as messages, against the fake Slack, Parley in process: in a
thread (where Slack takes no slash command) they bind the thread, its text then goes to the
bound session and the answers come back in the thread; each command is answered to its author
alone (``chat.postEphemeral``) and never reaches an agent as text; only who focused may
unfocus."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.settings import Settings
from tests.channels.slack.fake_slack import GENERAL, PEOPLE, FakeSlack
from tests.channels.slack.on_slack import ACCOUNT, on_slack, scribe_on
from tests.support import Harness, ManualClock, call, eventually


@pytest.fixture
def settings(settings: Settings, fake_slack: FakeSlack) -> Settings:
    return on_slack(settings, False, fake_slack)


@pytest.fixture
async def parley(
    settings: Settings, clock: ManualClock, fake_slack: FakeSlack, tmp_path: Path
) -> AsyncIterator[Harness]:
    async with scribe_on(settings, clock, fake_slack, tmp_path) as harness:
        await harness.hire("keeper", human="owner")
        yield harness


async def said_to(parley: Harness, agent: str, texts: list[str]) -> bool:
    conversation = await call(parley, "GET", f"/conversations/{agent}")
    return [m["body"] for m in conversation["messages"]["items"] if m["kind"] == "text"] == texts


async def shown(fake: FakeSlack, count: int) -> str:
    """The ``count``-th answer to a command (from 1), once shown."""
    await fake.wait_until(lambda: len(fake.ephemerals) >= count)
    return fake.ephemerals[count - 1].text


async def test_focus_in_a_thread_binds_the_thread(parley: Harness, fake_slack: FakeSlack) -> None:
    await call(parley, "POST", "/people", name="bea")
    await call(parley, "PUT", f"/channels/slack/accounts/{ACCOUNT}/identities/{PEOPLE['bea']}",
               person="bea")  # fmt: skip
    top = await fake_slack.user_says("ada", "a topic")
    await fake_slack.wait_until(lambda: fake_slack.texts() == ["echo: a topic"])
    await fake_slack.user_says("ada", "!focus keeper", thread_ts=top)
    said = await shown(fake_slack, 1)
    assert "Bound here to topic:" in said and "(keeper)" in said
    (answer,) = fake_slack.ephemerals
    assert (answer.user, answer.thread_ts) == (PEOPLE["ada"], top)
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert binding["conversation"]["conversation_id"] == f"{GENERAL}/{top}"
    assert binding["conversation"]["parent_conversation_id"] == GENERAL

    await fake_slack.user_says("ada", "for the keeper", thread_ts=top)
    assert await eventually(lambda: said_to(parley, "keeper", ["for the keeper"]))
    await fake_slack.user_says("bea", "!unfocus", thread_ts=top)
    assert "only who bound it" in await shown(fake_slack, 2)
    await fake_slack.user_says("ada", "!UNFOCUS", thread_ts=top)
    assert (await shown(fake_slack, 3)).startswith("Unbound from topic:")
    (binding,) = (await call(parley, "GET", "/bindings"))["items"]
    assert (binding["status"], binding["ended_reason"]) == ("ended", "unfocus")

    # the commands never reached an agent
    assert await said_to(parley, "keeper", ["for the keeper"])
    assert await said_to(parley, "scribe", ["a topic"])
    assert fake_slack.texts(GENERAL, top) == []  # nothing posted in the thread but ephemerals


async def test_a_command_without_a_target_is_answered_with_its_usage(
    parley: Harness, fake_slack: FakeSlack
) -> None:
    await fake_slack.user_says("ada", "!focus")
    assert (await shown(fake_slack, 1)).startswith("usage: /focus")
    await fake_slack.user_says("stranger", "!focus scribe")
    assert "Parley does not know you" in await shown(fake_slack, 2)
    assert (await call(parley, "GET", "/bindings"))["items"] == []
    assert fake_slack.posts() == []
