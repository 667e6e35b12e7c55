"""A chat service's library is loaded when its first account connects, not at every start: a
server with no account of a service never imports its library (discord.py, python-telegram-bot,
mautrix and slack-sdk together cost some 0.4 s of CPU at each start). Checked by what a fresh
interpreter holds once a server has started, not by a clock."""

from __future__ import annotations

from pathlib import Path

from tests.probes import modules_loaded_by

LIBRARIES = ("discord", "telegram", "mautrix", "slack_sdk")

PROBE = """
import asyncio, json, sys
from pathlib import Path
from parley.clock import SystemClock
from parley.settings import ChannelsSettings, Settings, TelegramSettings
from parley.startup import running

async def main(folder, telegram_account):
    telegram = TelegramSettings(api_base_url="http://127.0.0.1:9", accounts_poll_seconds=3600)
    settings = Settings(
        data_dir=Path(folder), heartbeat_seconds=3600, sweep_seconds=3600,
        channels=ChannelsSettings(telegram=telegram),
    )
    if telegram_account:  # an account with a token, stored before the start
        async with running(settings, SystemClock()) as context:
            async with context.store.transaction() as tx:
                now = context.clock.now()
                account = await tx.channels.add_account("telegram", "bot", None, now)
                await tx.channels.set_token(account.id, "123:secret")
    async with running(settings, SystemClock()):
        loaded = sorted(sys.modules)
    print(json.dumps(loaded))

asyncio.run(main(sys.argv[1], sys.argv[2] == "yes"))
"""


def _loaded_by_a_start(folder: Path, telegram_account: bool) -> set[str]:
    loaded = modules_loaded_by(PROBE, str(folder), "yes" if telegram_account else "no")
    return {name.split(".")[0] for name in loaded}


def test_a_server_with_no_chat_account_loads_no_chat_library(tmp_path: Path) -> None:
    loaded = _loaded_by_a_start(tmp_path / "data", telegram_account=False)
    assert "parley" in loaded and "sqlalchemy" in loaded  # the probe did start a server
    assert loaded.isdisjoint(LIBRARIES), sorted(loaded & set(LIBRARIES))


def test_an_account_stored_before_the_start_loads_its_library_alone(tmp_path: Path) -> None:
    loaded = _loaded_by_a_start(tmp_path / "data", telegram_account=True)
    assert "telegram" in loaded
    assert loaded.isdisjoint(set(LIBRARIES) - {"telegram"}), sorted(loaded & set(LIBRARIES))
