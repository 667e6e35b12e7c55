"""A Telegram bot's two HTTP clients (sending, long polling) share Parley's one TLS context
(``parley/tls.py``): making a bot, at each start and each new token, reads no CAs."""

from __future__ import annotations

import pytest

from parley.channels.connected import AccountStates
from parley.channels.telegram.manager import TelegramAccountManager
from parley.settings import TelegramSettings
from parley.tls import trusted
from tests.support import Harness
from tests.trust import cas_read, without_shared_trust


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_making_a_bot_reads_no_cas(parley: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    trusted()  # read once for the process, as the first peer, push or bot does
    made = cas_read(monkeypatch)
    clock = parley.clock
    manager = TelegramAccountManager(
        parley.context.store, clock, "main", TelegramSettings(), AccountStates(clock)
    )
    with without_shared_trust():  # only what Parley shares counts here, not the suite's
        bot = manager.make_bot("123456:not-a-real-token")
    assert made == []
    assert bot.token == "123456:not-a-real-token"
