"""``parley serve`` as a separate process, pointed at the fake Discord by its settings alone (a
``parley.toml``, as an operator points it at a compatible server): set up with the CLI, a person's
message on the fake reaches the agent, and its answer comes back there; the account's state reads
connected."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tests.channels.discord.fake_discord import HANG_GUARD, FakeDiscord
from tests.channels.discord.fake_http import API
from tests.cli.test_serve import cli
from tests.cli.test_server_killed import server

T = TypeVar("T")


class FakeOnItsOwnLoop:
    """The fake Discord served from a thread of its own, so a blocking test can drive it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.fake = FakeDiscord()

    def do(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(work(), self.loop).result(HANG_GUARD)

    def until(self, condition: Callable[[], bool]) -> None:
        self.do(lambda: self.fake.wait_until(condition))

    @contextmanager
    def running(self) -> Iterator[FakeDiscord]:
        self._thread.start()
        self.do(self.fake.start)
        try:
            yield self.fake
        finally:
            self.do(self.fake.stop)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(HANG_GUARD)


def test_a_served_parley_speaks_to_the_discord_its_settings_name(tmp_path: Path) -> None:
    driver = FakeOnItsOwnLoop()
    with driver.running() as fake:
        (tmp_path / "parley.toml").write_text(
            "[channels.discord]\n"
            f'api_base_url = "{fake.url}{API}"\n'
            f'gateway_url = "{fake.gateway.url}"\n'
            "accounts_poll_seconds = 0.2\n"
        )
        (tmp_path / "bot-token").write_text(fake.token + "\n")
        with server(tmp_path) as served:
            served.cli("agent", "hire", "scribe", "--node", "local")
            served.cli(
                "channel", "account", "add", "discord", "bot",
                "--default-agent", "scribe", "--token-file", str(tmp_path / "bot-token"),
            )  # fmt: skip
            ada = fake.state.user("ada").id
            linked = cli(tmp_path, served.port, "channel", "identity", "link", "discord", "bot",
                         str(ada), "owner")  # fmt: skip
            assert linked.returncode == 0, linked.stderr
            driver.until(lambda: fake.gateway.identifies >= 1)
            general = fake.channel.id
            driver.do(lambda: fake.user_says(general, "ada", "hello from afar"))
            driver.until(lambda: any("I heard: hello from afar" in t
                                     for t in fake.state.texts(general)))  # fmt: skip
            (account,) = served.cli("channel", "account", "list")
    assert (account["channel"], account["state"], account["has_token"]) == (
        "discord",
        "connected",
        True,
    )
    assert account["last_outbound_at"] is not None
