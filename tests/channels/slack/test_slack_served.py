"""``parley serve`` as a separate process, pointed at the fake Slack by its settings alone (a
``parley.toml``, as an operator points it at another Web API): set up with the CLI (the two
tokens from a file, on two lines), a person's message on the fake reaches the agent over Socket
Mode, and its answer comes back there; the account's state reads connected."""

from __future__ import annotations

from pathlib import Path

from tests.channels.fake_loop import FakeOnItsOwnLoop
from tests.channels.slack.fake_slack import GENERAL, PEOPLE, FakeSlack
from tests.cli.test_serve import cli
from tests.cli.test_server_killed import server


def test_a_served_parley_speaks_to_the_slack_its_settings_name(tmp_path: Path) -> None:
    driver = FakeOnItsOwnLoop(FakeSlack())
    with driver.running() as fake:
        (tmp_path / "parley.toml").write_text(
            f'[channels.slack]\napi_base_url = "{fake.api_url}"\naccounts_poll_seconds = 0.2\n'
        )
        (tmp_path / "slack-tokens").write_text(f"{fake.app_token}\n{fake.bot_token}\n")
        with server(tmp_path) as served:
            served.cli("agent", "hire", "scribe", "--node", "local")
            served.cli(
                "channel", "account", "add", "slack", "work",
                "--default-agent", "scribe", "--token-file", str(tmp_path / "slack-tokens"),
            )  # fmt: skip
            linked = cli(tmp_path, served.port, "channel", "identity", "link", "slack", "work",
                         PEOPLE["ada"], "owner")  # fmt: skip
            assert linked.returncode == 0, linked.stderr
            driver.until(lambda: bool(fake.sockets))
            driver.do(lambda: fake.user_says("ada", "hello from afar"))
            driver.until(lambda: any("I heard: hello from afar" in t
                                     for t in fake.texts(GENERAL)))  # fmt: skip
            (account,) = served.cli("channel", "account", "list")
    assert (account["channel"], account["state"], account["has_token"]) == (
        "slack",
        "connected",
        True,
    )
    assert account["last_outbound_at"] is not None
