"""The ``fake_telegram`` fixture: a started fake Telegram Bot API server on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.channels.telegram.fake_telegram import FakeTelegram


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake
