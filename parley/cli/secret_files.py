"""A secret given to a command by file ('-': stdin), never on its command line (where other
users of the machine read it in the process list)."""

from __future__ import annotations

import sys
from pathlib import Path

from parley.errors import Invalid


def read_secret(name: str) -> str:
    if name == "-":
        return sys.stdin.read().strip()
    try:
        return Path(name).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise Invalid(f"cannot read the token file {name}: {exc}") from exc
