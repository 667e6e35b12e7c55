"""The chat services Parley speaks to besides its own web channel: for each, the library it
speaks through (an optional extra, imported only by that channel's package), what an account's
secret is, and the one-line hint given when the library is missing."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from parley.extras import install_command


@dataclass(frozen=True)
class ChannelKind:
    name: str
    library: str  # the import name of the library the channel's package speaks through
    package: str  # its name on PyPI
    extra: str  # the optional extra that installs it
    secret: str  # what an account's secret is, as errors name it
    secret_prefixes: tuple[str, ...] = ()  # several words: one starting with each, any order

    def installed(self) -> bool:
        """Asked without importing the library."""
        return importlib.util.find_spec(self.library) is not None

    def install_hint(self) -> str:
        return f"{self.name.capitalize()} needs {self.package}: {install_command(self.extra)}"


DISCORD = ChannelKind("discord", "discord", "discord.py", "discord", "the bot's token")
TELEGRAM = ChannelKind("telegram", "telegram", "python-telegram-bot", "telegram", "the bot's token")
MATRIX = ChannelKind("matrix", "mautrix", "mautrix", "matrix", "the bot user's access token")
SLACK = ChannelKind(
    "slack", "slack_sdk", "slack-sdk", "slack",
    "the bot token (xoxb-…) and the app-level token (xapp-…), one space between",
    secret_prefixes=("xoxb-", "xapp-"),
)  # fmt: skip

KINDS: dict[str, ChannelKind] = {kind.name: kind for kind in (DISCORD, TELEGRAM, MATRIX, SLACK)}


def kind_of(channel: str) -> ChannelKind | None:
    """The chat service named so, if Parley speaks to one by that name."""
    return KINDS.get(channel)
