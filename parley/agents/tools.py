"""An agent's tool list: which workspace tools (read, list, find, write, edit, run) its runs are
offered and may call. Parley's own actions (send, report, …) are not on it: every run has them.

A new agent has the read-only tools. A node session's list is narrower by rule: it runs no
command unless the installation's operator grants it (``node_sessions_may_run``), since its
turns answer whoever asks the node.
"""

from __future__ import annotations

from collections.abc import Iterable

from parley.actions.table import READ_ONLY_TOOLS, WORKSPACE_TOOLS
from parley.errors import Forbidden, Invalid

DEFAULT_TOOLS = READ_ONLY_TOOLS
# What a node session may not be given unless the operator says so in the settings.
OPERATOR_GRANTED = ("run",)


def parse_tools(given: str) -> tuple[str, ...]:
    """``read,write,run`` as written on the command line or in a form; "" or "none": no tool."""
    parts = [part.strip() for part in given.split(",") if part.strip()]
    return () if [part.lower() for part in parts] == ["none"] else check_tools(parts)


def check_tools(names: Iterable[str]) -> tuple[str, ...]:
    """Known workspace tools, each once, in the table's order (how every surface shows them)."""
    wanted = set()
    for name in names:
        if name not in WORKSPACE_TOOLS:
            raise Invalid(
                f"there is no tool {name!r}; an agent's tools are {', '.join(WORKSPACE_TOOLS)}",
                field="tools",
            )
        wanted.add(name)
    return tuple(name for name in WORKSPACE_TOOLS if name in wanted)


def check_node_session_tools(node: str, tools: tuple[str, ...], granted: bool) -> None:
    """A node session answers whoever asks its node: it runs commands only if the operator
    granted it."""
    refused = [name for name in tools if name in OPERATOR_GRANTED]
    if refused and not granted:
        raise Forbidden(
            f"node {node}'s session may not {', '.join(refused)}: a node session's tools are"
            " narrower than a hired agent's unless the operator grants it"
            " (node_sessions_may_run = true in the settings)"
        )


def stored(tools: tuple[str, ...]) -> str:
    return ",".join(tools)
