"""Where the CLI finds Parley: its address, and the data folder that holds the owner token.

Both come from the settings, but the settings' library (pydantic) costs more than the rest of a
command: it is loaded only when something could move them from their defaults, that is a
``PARLEY_*`` variable naming one of them or a config file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from parley import defaults

# The settings that say where Parley is, as environment variables.
_WHERE_VARIABLES = {"PARLEY_DATA_DIR", "PARLEY_HOST", "PARLEY_PORT", "PARLEY_PUBLIC_URL"}


@dataclass(frozen=True)
class Whereabouts:
    data_dir: Path
    base_url: str  # where the server is when nothing more precise says so


def whereabouts() -> Whereabouts:
    if _only_defaults():
        return Whereabouts(defaults.DATA_DIR, f"http://{defaults.HOST}:{defaults.PORT}")
    from parley.settings import load_settings

    settings = load_settings()
    return Whereabouts(settings.data_dir, settings.base_url)


def _only_defaults() -> bool:
    # The settings read variables whatever their case, and parley.toml unless PARLEY_CONFIG
    # names another file.
    named = {name.upper() for name in os.environ}
    return not (named & (_WHERE_VARIABLES | {"PARLEY_CONFIG"})) and not Path("parley.toml").exists()
