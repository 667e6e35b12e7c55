"""The ``fake_slack`` fixture: a started fake Slack, which Parley reaches through its settings
(``on_slack``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.channels.slack.fake_slack import FakeSlack


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake
