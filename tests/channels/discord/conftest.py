"""The ``fake_discord`` fixture: a started fake Discord. Parley reaches it through its settings
(``on_discord``); the plain clients of ``test_fake_discord.py`` through ``pointed_at``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.channels.discord.fake_discord import FakeDiscord


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        yield fake
