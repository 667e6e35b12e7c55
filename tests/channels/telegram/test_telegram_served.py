"""``parley serve`` (a real server on a loopback port, on a thread of its own) pointed at the
fake Telegram (on a thread and event loop of its own), set up as the README says, with the
CLI: an account added with its token from a file, a Telegram user linked to a person; what that
person says is answered, and the account is listed connected, its token never shown."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from parley.settings import Settings
from tests.channels.telegram.fake_telegram import FakeTelegram
from tests.channels.telegram.on_telegram import ECHO, on_telegram
from tests.cli.test_runtime_commands import hire, ok, ok_json, until
from tests.served import Served

T = TypeVar("T")


class FakeOnItsThread:
    """The fake, serving from an event loop on a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.fake = self.run(self._started())

    async def _started(self) -> FakeTelegram:
        fake = FakeTelegram()
        await fake.start()
        return fake

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=30)

    def close(self) -> None:
        self.run(self.fake.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()


@pytest.fixture
def telegram() -> Iterator[FakeOnItsThread]:
    served_fake = FakeOnItsThread()
    yield served_fake
    served_fake.close()


@pytest.fixture
def settings(settings: Settings, telegram: FakeOnItsThread) -> Settings:
    return on_telegram(settings, False, telegram.fake)


def test_parley_serve_set_up_with_the_cli_answers_on_telegram(
    served: Served, telegram: FakeOnItsThread, tmp_path: Path
) -> None:
    fake = telegram.fake
    hire(served, tmp_path, "scribe", ECHO)
    token = tmp_path / "telegram-token.txt"
    token.write_text(f"{fake.token}\n")
    ok(served, "channel", "account", "add", "telegram", "mybot", "--default-agent", "scribe",
       "--token-file", str(token))  # fmt: skip
    ada = str(fake.state.user("ada").id)
    ok(served, "channel", "identity", "link", "telegram", "mybot", ada, "owner")
    until(lambda: fake.state.calls_to("getUpdates"))
    telegram.run(fake.user_says(fake.private, "ada", "hello"))
    until(lambda: "echo: hello" in fake.state.texts(fake.private.id))
    (row,) = ok_json(served, "channel", "account", "list")
    assert (row["channel"], row["state"], row["has_token"]) == ("telegram", "connected", True)
    assert fake.token not in ok(served, "channel", "account", "list")
