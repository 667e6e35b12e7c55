"""How to install one of Parley's optional extras, said for where this Parley runs.

The distribution is ``parley-home`` (the index's ``parley`` is an unrelated package of 2007): a
hint naming ``parley[...]`` would install that one. Run from a checkout (the ``./dev`` way), the
command that works is an editable install of the checkout into the interpreter running now."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DISTRIBUTION = "parley-home"


def install_command(extra: str) -> str:
    """The one command that adds ``extra`` to the Parley running now."""
    pip = _shown(Path(sys.executable).with_name("pip"))
    checkout = _checkout()
    if checkout is not None:
        return f"{pip} install -e '{_shown(checkout) if checkout != Path.cwd() else '.'}[{extra}]'"
    return f"{pip} install '{DISTRIBUTION}[{extra}]'"


def _checkout() -> Path | None:
    """The source folder this Parley is installed from, when it is one (a pyproject beside it)."""
    root = Path(__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    try:
        named = f'name = "{DISTRIBUTION}"' in pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if named else None


def _shown(path: Path) -> str:
    """A path as a person would type it here: relative when under the current folder."""
    try:
        return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)
