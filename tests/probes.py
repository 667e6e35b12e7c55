"""What a fresh interpreter holds after a probe: Python source run with ``-c`` whose last line of
output is the JSON list of ``sys.modules``' names. How the suite checks what a command or a start
imports, by the modules loaded rather than by a clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping


def modules_loaded_by(
    probe: str, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> set[str]:
    """The modules ``probe`` (given ``args``) left loaded; ``env``: the process's environment,
    by default this one's without Parley's settings."""
    given = (
        dict(env)
        if env is not None
        else {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        env=given,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))
