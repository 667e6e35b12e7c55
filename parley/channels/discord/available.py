"""Whether discord.py is installed, asked without importing it (it is an optional extra)."""

from __future__ import annotations

import importlib.util

from parley.extras import install_command


def install_hint() -> str:
    return f"Discord needs discord.py: {install_command('discord')}"


def discord_installed() -> bool:
    return importlib.util.find_spec("discord") is not None
