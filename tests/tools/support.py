"""A workspace beside a sibling folder it must never reach, and tools confined to it: with
openat2, and with the fallback kept for kernels without it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parley.brains.confinement import ProcessPolicy
from parley.tools.workspace import ToolLimits, WorkspaceTools

SERVER_ENVIRONMENT = {
    "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
    "LANG": "C.UTF-8",
    "SECRET_KEY": "the-server-s-secret",
}


@dataclass
class Place:
    workspace: Path
    sibling: Path  # beside the workspace, holding a secret: out of reach

    def tools(self, **limits: Any) -> WorkspaceTools:
        policy = ProcessPolicy(server_environment=SERVER_ENVIRONMENT)
        return WorkspaceTools(
            self.workspace,
            policy=policy,
            env={"GIVEN": "given-value"},
            limits=ToolLimits(**limits),
            grace_seconds=0.1,
        )


def tree(folder: Path) -> dict[str, str]:
    """Every path under ``folder`` (links not followed), with a file's text."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = str(path.relative_to(folder))
        if path.is_symlink():
            found[relative] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[relative] = path.read_text(errors="replace")
        else:
            found[relative] = "/"
    return found
