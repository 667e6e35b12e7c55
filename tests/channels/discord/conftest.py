"""The ``fake_discord`` fixture: a started fake Discord that discord.py is pointed at."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.channels.discord.fake_discord import FakeDiscord, pointed_at


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        with pointed_at(fake):
            yield fake
