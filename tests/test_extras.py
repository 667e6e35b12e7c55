"""Install hints name the distribution that is Parley, in the command that works where it runs."""

from __future__ import annotations

import logging
import sys
import tomllib
from pathlib import Path

import pytest

from parley.channels.kinds import KINDS
from parley.extras import DISTRIBUTION, install_command
from tests.support import Harness

ROOT = Path(__file__).resolve().parent.parent


def test_the_distribution_named_in_hints_is_the_one_pyproject_builds() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION != "parley"  # the index's "parley" is not this one
    dev_extras = f"{DISTRIBUTION}[anthropic,discord,telegram,slack,matrix]"
    assert dev_extras in project["optional-dependencies"]["dev"]
    for kind in KINDS.values():  # each chat service's hint names an extra that exists
        assert kind.extra in project["optional-dependencies"]


def test_in_its_checkout_the_hint_installs_the_checkout_into_the_running_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    pip = Path(sys.executable).with_name("pip")
    command = install_command("discord")
    assert command.endswith(" install -e '.[discord]'")
    assert Path(command.split(" ")[0]).absolute() == pip.absolute()


def test_elsewhere_the_hint_names_the_checkout_by_its_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert install_command("anthropic").endswith(f" install -e '{ROOT}[anthropic]'")


async def test_a_discord_token_set_while_discord_py_is_missing_logs_the_hint_at_once(
    parley: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    account = "/api/v1/channels/discord/accounts/guild"
    assert (await parley.owner.put(account, json={})).status_code == 200
    monkeypatch.setitem(sys.modules, "discord", None)  # what find_spec sees without the extra
    with caplog.at_level(logging.ERROR, logger="parley"):
        response = await parley.owner.put(f"{account}/token", json={"token": "abc.def"})
    assert response.status_code == 200, response.text
    hints = [r.getMessage() for r in caplog.records if "Discord needs discord.py" in r.getMessage()]
    assert hints == [f"Discord needs discord.py: {install_command('discord')}"]
