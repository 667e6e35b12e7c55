"""Whether discord.py is installed, asked without importing it (it is an optional extra)."""

from __future__ import annotations

import importlib.util

INSTALL_HINT = "Discord needs discord.py: pip install 'parley[discord]'"


def discord_installed() -> bool:
    return importlib.util.find_spec("discord") is not None
