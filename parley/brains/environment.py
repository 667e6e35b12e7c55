"""A command brain's environment: an allow-list, never what the server was started with.

The process gets ``PATH`` (with the ``parley`` command first on it), ``HOME``, ``LANG``,
``LC_*`` and ``TZ`` from the server; the run's own ``PARLEY_*`` variables and ``TMPDIR`` (a
temporary folder of the turn's own, see ``confinement.py``); and the variables an
owner declared for the agent: a value stored with it, or a name whose value is taken from the
server's environment at each turn (``--env-from-server``). Nothing else: no API key, database
URL or token the server holds reaches a brain unless an owner declared it for that agent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from parley.errors import Invalid
from parley.text import refuse_nul

ALLOWED = ("PATH", "HOME", "LANG", "TZ")
ALLOWED_PREFIX = "LC_"
RESERVED_PREFIX = "PARLEY_"
TEMP = "TMPDIR"
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

NAME = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
MAX_NAME = 128
MAX_VALUE = 32 * 1024  # bytes, UTF-8
MAX_VARIABLES = 64


def check_variable_name(name: str) -> str:
    if not NAME.match(name) or len(name) > MAX_NAME:
        raise Invalid(
            f"variable name {name[:MAX_NAME]!r} is not valid: use A-Z, 0-9 and _, not starting"
            f" with a digit, at most {MAX_NAME} characters",
            field="env",
        )
    if name.startswith(RESERVED_PREFIX):
        raise Invalid(f"variable {name}: PARLEY_* variables are the run's own", field="env")
    if name == TEMP:
        raise Invalid(f"variable {name} is each turn's own temporary folder", field="env")
    if name in ALLOWED or name.startswith(ALLOWED_PREFIX):
        raise Invalid(f"variable {name} always comes from the server; it cannot be declared")
    return name


def check_variable_value(name: str, value: str) -> str:
    refuse_nul(value, f"env.{name}")
    if len(value.encode()) > MAX_VALUE:
        raise Invalid(f"variable {name}: a value is at most {MAX_VALUE} bytes", field="env")
    return value


def allowed_from(server: Mapping[str, str], parley_bin: Path | None) -> dict[str, str]:
    """The server's variables a brain may see, with ``parley_bin`` first on ``PATH``."""
    kept = {
        name: value
        for name, value in server.items()
        if name in ALLOWED or name.startswith(ALLOWED_PREFIX)
    }
    path = kept.get("PATH", DEFAULT_PATH)
    if parley_bin is not None and path.split(":")[0] != str(parley_bin):
        path = f"{parley_bin}:{path}"
    kept["PATH"] = path
    return kept


def from_server(names: Iterable[str], server: Mapping[str, str], agent: str) -> dict[str, str]:
    """Declared variables whose values the server's environment gives, at this turn."""
    missing = [name for name in names if name not in server]
    if missing:
        raise Invalid(
            f"agent {agent} takes {', '.join(missing)} from the server's environment, where"
            " it is not set"
        )
    return {name: server[name] for name in names}
