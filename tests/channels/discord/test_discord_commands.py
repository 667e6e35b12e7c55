"""parley channel account token … through a running server: an owner sets a Discord account's
token from a file or stdin (never from argv), replaces and forgets it; it is never shown back."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.settings import ChannelsSettings, DiscordSettings, Settings
from tests.cli.test_runtime_commands import ok, ok_json, run
from tests.served import Served


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # No connection is tried while the test runs: the server looks for accounts at start only.
    discord = DiscordSettings(accounts_poll_seconds=3600)
    return settings.model_copy(update={"channels": ChannelsSettings(discord=discord)})


def test_a_token_from_a_file_or_stdin_never_shown(served: Served, tmp_path: Path) -> None:
    ok(served, "channel", "account", "set", "discord", "bot1")
    secret = tmp_path / "token"
    secret.write_text("first-secret\n")
    assert ok(served, "channel", "account", "token", "discord", "bot1", "--file", str(secret)) == (
        "discord account bot1: token set\n"
    )
    replaced = ok(
        served, "channel", "account", "token", "discord", "bot1", "--file", "-",
        stdin="second-secret\n",
    )  # fmt: skip
    assert replaced == "discord account bot1: token set\n"
    (row,) = ok_json(served, "channel", "account", "list")
    assert row["has_token"] is True
    listed = ok(served, "channel", "account", "list")
    assert "secret" not in listed and "secret" not in str(row)
    cleared = ok(served, "channel", "account", "token", "discord", "bot1", "--clear")
    assert cleared == "discord account bot1: no token\n"


def test_token_refusals(served: Served, tmp_path: Path) -> None:
    ok(served, "channel", "account", "set", "discord", "bot1")
    neither = run(served, "channel", "account", "token", "discord", "bot1")
    assert neither.exit_code != 0 and "--file" in neither.output
    missing = run(served, "channel", "account", "token", "discord", "bot1", "--file",
                  str(tmp_path / "nope"))  # fmt: skip
    assert missing.exit_code != 0 and "cannot read the token file" in missing.output
    unknown = run(served, "channel", "account", "token", "discord", "nope", "--file", "-",
                  stdin="abc")  # fmt: skip
    assert unknown.exit_code == 3 and "no discord account 'nope'" in unknown.output
