"""The tools of an agent's MCP servers as a model is offered them. Providers take a tool name of
letters, digits, _ and - (at most 64): no dot, so ``files.read`` is offered as ``files__read``
and called back under its own name."""

from __future__ import annotations

import re

from parley.actions.table import ACTIONS
from parley.brains.brain import OutsideTool

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
MAX_NAME = 64


def offered_names(tools: tuple[OutsideTool, ...]) -> dict[str, str]:
    """Each tool's offered name, to its own ``server.tool``. A tool whose offered name would
    clash with another's, or with an action's, is left out."""
    named: dict[str, str] = {}
    for tool in tools:
        offered = _UNSAFE.sub("_", tool.name.replace(".", "__", 1))[:MAX_NAME]
        if offered not in named and offered not in ACTIONS:
            named[offered] = tool.name
    return named
