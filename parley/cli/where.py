"""Where the CLI finds Parley: its address, and the data folder that holds the owner token.

The address: ``--url``, else ``PARLEY_URL``, else the URL the server running on the data folder
wrote there (``private/server-url``), else ``http://HOST:PORT`` of the settings. The data folder
and that last address come from the settings, but the settings' library (pydantic-settings)
costs more than the rest of a command: it is loaded only when something could move them from
their defaults, that is a ``PARLEY_*`` variable naming one of them or a config file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from parley import defaults
from parley.datafolder import DataFolder

# The settings that say where Parley is, as environment variables.
_WHERE_VARIABLES = {"PARLEY_DATA_DIR", "PARLEY_HOST", "PARLEY_PORT", "PARLEY_PUBLIC_URL"}


@dataclass(frozen=True)
class Whereabouts:
    data_dir: Path
    base_url: str  # where the server is unless --url or PARLEY_URL say otherwise


def whereabouts() -> Whereabouts:
    data_dir, configured = _settings()
    return Whereabouts(data_dir, _announced(data_dir) or configured)


def _settings() -> tuple[Path, str]:
    if _only_defaults():
        return defaults.DATA_DIR, f"http://{defaults.HOST}:{defaults.PORT}"
    from parley.settings import load_settings

    settings = load_settings()
    return settings.data_dir, settings.base_url


def _announced(data_dir: Path) -> str | None:
    try:
        return DataFolder(data_dir).server_url.read_text().strip() or None
    except OSError:
        return None


def _only_defaults() -> bool:
    # The settings read variables whatever their case, and parley.toml unless PARLEY_CONFIG
    # names another file.
    named = {name.upper() for name in os.environ}
    return not (named & (_WHERE_VARIABLES | {"PARLEY_CONFIG"})) and not Path("parley.toml").exists()
