"""``parley serve`` as a separate process, pointed at the fake Bot API server by its settings
alone (a ``parley.toml``, as an operator points it at a local telegram-bot-api server), set up as
the README says with the CLI: an account added with its token from a file, a Telegram user linked
to a person; what that person says is answered, and the account is listed connected, its token
never shown."""

from __future__ import annotations

from pathlib import Path

from tests.channels.fake_loop import FakeOnItsOwnLoop
from tests.channels.telegram.fake_telegram import FakeTelegram
from tests.cli.test_serve import cli
from tests.cli.test_server_killed import server


def test_a_served_parley_speaks_to_the_bot_api_its_settings_name(tmp_path: Path) -> None:
    driver = FakeOnItsOwnLoop(FakeTelegram())
    with driver.running() as fake:
        (tmp_path / "parley.toml").write_text(
            "[channels.telegram]\n"
            f'api_base_url = "{fake.url}"\n'
            "accounts_poll_seconds = 0.2\npoll_timeout_seconds = 1\n"
        )
        (tmp_path / "telegram-token.txt").write_text(f"{fake.token}\n")
        with server(tmp_path) as served:
            served.cli("agent", "hire", "scribe", "--node", "local")
            served.cli(
                "channel", "account", "add", "telegram", "mybot",
                "--default-agent", "scribe", "--token-file", str(tmp_path / "telegram-token.txt"),
            )  # fmt: skip
            ada = str(fake.state.user("ada").id)
            linked = cli(tmp_path, served.port, "channel", "identity", "link", "telegram",
                         "mybot", ada, "owner")  # fmt: skip
            assert linked.returncode == 0, linked.stderr
            driver.until(lambda: bool(fake.state.calls_to("getUpdates")))
            chat = fake.private
            driver.do(lambda: fake.user_says(chat, "ada", "hello from afar"))
            driver.until(lambda: any("I heard: hello from afar" in t
                                     for t in fake.state.texts(chat.id)))  # fmt: skip
            listed = cli(tmp_path, served.port, "channel", "account", "list")
            (account,) = served.cli("channel", "account", "list")
    assert (account["channel"], account["state"], account["has_token"]) == (
        "telegram",
        "connected",
        True,
    )
    assert account["last_outbound_at"] is not None
    assert fake.token not in listed.stdout + listed.stderr
