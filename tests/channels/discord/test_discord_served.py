"""``parley serve`` as a separate process, pointed at the fake Discord by its settings alone (a
``parley.toml``, as an operator points it at a compatible server): set up with the CLI, a person's
message on the fake reaches the agent, and its answer comes back there; the account's state reads
connected."""

from __future__ import annotations

from pathlib import Path

from tests.channels.discord.fake_discord import FakeDiscord
from tests.channels.discord.fake_http import API
from tests.channels.fake_loop import FakeOnItsOwnLoop
from tests.cli.test_serve import cli
from tests.cli.test_server_killed import server


def test_a_served_parley_speaks_to_the_discord_its_settings_name(tmp_path: Path) -> None:
    driver = FakeOnItsOwnLoop(FakeDiscord())
    with driver.running() as fake:
        (tmp_path / "parley.toml").write_text(
            "[channels.discord]\n"
            f'api_base_url = "{fake.url}{API}"\n'
            f'gateway_url = "{fake.gateway.url}"\n'
            "accounts_poll_seconds = 0.2\n"
            "guild_ready_seconds = 0.05\n"
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
