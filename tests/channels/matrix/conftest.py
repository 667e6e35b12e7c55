"""The ``fake_matrix`` fixture: a started fake homeserver on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.channels.matrix.fake_matrix import FakeMatrix


@pytest.fixture
async def fake_matrix() -> AsyncIterator[FakeMatrix]:
    async with FakeMatrix() as fake:
        yield fake
