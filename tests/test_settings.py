"""Settings: defaults, parley.toml, PARLEY_* environment and flags, strongest last."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.errors import Invalid
from parley.settings import load_settings
from parley.store.engine import normalise_url


def test_defaults_are_the_embedded_installation() -> None:
    settings = load_settings()
    assert (settings.host, settings.port) == ("127.0.0.1", 8700)
    assert settings.data_dir == Path("parley-data")
    assert settings.resolved_database_url == "sqlite:///parley-data/private/parley.db"
    assert settings.warnings_to_dismiss == 2
    assert (settings.hop_budget, settings.hop_window_seconds) == (200, 3600)


def test_toml_then_environment_then_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "parley.toml"
    config.write_text(
        'port = 9000\nhost = "0.0.0.0"\nlog_level = "DEBUG"\nwarnings_to_dismiss = 4\n'
    )
    monkeypatch.setenv("PARLEY_CONFIG", str(config))
    assert load_settings().port == 9000
    assert load_settings().log_level == "debug"
    monkeypatch.setenv("PARLEY_PORT", "9100")
    assert load_settings().port == 9100
    assert load_settings(port=9200).port == 9200
    assert load_settings(port=None).port == 9100  # an absent flag does not erase the others
    assert load_settings().host == "0.0.0.0"


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ("port = 70000\n", "port: Input should be less than or equal to 65535"),
        ('log_level = "loud"\n', "log_level"),
        ("colour = 3\n", "colour: Extra inputs are not permitted"),
        ("port = = 3\n", "bad settings"),
        ('node_name = "My Laptop"\n', "node_name: Value error, 'My Laptop' is not a name"),
        ("hop_budget = 0\n", "hop_budget: Input should be greater than or equal to 1"),
        ("brain_idle_seconds = 0\n", "brain_idle_seconds: Input should be greater than 0"),
        ("max_brains = 0\n", "max_brains: Input should be greater than or equal to 1"),
    ],
)
def test_bad_settings_say_which_and_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, toml: str, says: str
) -> None:
    config = tmp_path / "parley.toml"
    config.write_text(toml)
    monkeypatch.setenv("PARLEY_CONFIG", str(config))
    with pytest.raises(Invalid, match="bad settings") as caught:
        load_settings()
    assert says in caught.value.message


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("sqlite:///x.db", "sqlite+pysqlite:///x.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+pysqlite:///x.db"),
        ("postgresql://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("postgres://u:pw@h:5433/db", "postgresql+asyncpg://u:pw@h:5433/db"),
        ("postgresql+asyncpg://u@h/db", "postgresql+asyncpg://u@h/db"),
    ],
)
def test_database_urls_as_operators_type_them(given: str, used: str) -> None:
    assert normalise_url(given) == used


@pytest.mark.parametrize("url", ["mysql://u@h/db", "not a url"])
def test_unsupported_database_urls_are_refused(url: str) -> None:
    with pytest.raises(Invalid, match="database URL"):
        normalise_url(url)


def test_the_store_s_direct_paths_are_on_unless_the_environment_turns_them_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().direct_driver is True
    monkeypatch.setenv("PARLEY_DIRECT_DRIVER", "0")  # how ./dev test runs tests/store again
    assert load_settings().direct_driver is False
