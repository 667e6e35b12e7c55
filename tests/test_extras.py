"""Install hints name the distribution that is Parley, in the command that works where it runs."""

from __future__ import annotations

import logging
import sys
import tomllib
from pathlib import Path

import pytest

from parley.channels.kinds import KINDS
from parley.extras import DISTRIBUTION, install_command
from parley.settings import ChannelsSettings, MatrixSettings, Settings
from tests.support import Harness, ManualClock, started

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


A_SECRET = {
    "discord": "abc.def",
    "telegram": "123456:ABC-def",
    "slack": "xoxb-1-2 xapp-1-A",
    "matrix": "syt_abc_123",
}


@pytest.mark.parametrize("channel", sorted(KINDS))
async def test_a_token_set_while_the_library_is_missing_logs_the_hint_at_once(
    parley: Harness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    channel: str,
) -> None:
    kind = KINDS[channel]
    account = f"/api/v1/channels/{channel}/accounts/guild"
    assert (await parley.owner.put(account, json={})).status_code == 200
    monkeypatch.setitem(sys.modules, kind.library, None)  # what find_spec sees without the extra
    with caplog.at_level(logging.ERROR, logger="parley"):
        response = await parley.owner.put(f"{account}/token", json={"token": A_SECRET[channel]})
    assert response.status_code == 200, response.text
    said = f"{channel.capitalize()} needs {kind.package}: {install_command(kind.extra)}"
    assert [r.getMessage() for r in caplog.records if " needs " in r.getMessage()] == [said]


async def test_a_server_started_without_a_library_says_so_for_its_accounts_with_a_token(
    settings: Settings,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    nowhere = ChannelsSettings(matrix=MatrixSettings(homeserver_url="http://127.0.0.1:9"))
    settings = settings.model_copy(update={"channels": nowhere})
    async with started(settings, clock) as parley:
        for channel in ("telegram", "matrix"):
            account = f"/api/v1/channels/{channel}/accounts/guild"
            await parley.owner.put(account, json={})
            await parley.owner.put(f"{account}/token", json={"token": A_SECRET[channel]})
    monkeypatch.setitem(sys.modules, "telegram", None)
    with caplog.at_level(logging.ERROR, logger="parley"):
        async with started(settings, clock):
            pass
    hints = [r.getMessage() for r in caplog.records if " needs " in r.getMessage()]
    assert hints == [f"Telegram needs python-telegram-bot: {install_command('telegram')}"]
