"""An agent's tool list: which workspace tools (read, list, find, write, edit, run) its runs are
offered and may call. Parley's own actions (send, report, …) are not on it: every run has them.

Its ask list: which of its tools wait for a person's approval before each call
(``parley/approvals/``): a workspace tool by name, one of its MCP servers (every tool of it) or one
tool of a server (``SERVER.tool``). A new agent asks before ``run``.

A new agent has the read-only tools. A node session's list is narrower by rule: it runs no
command unless the installation's operator grants it (``node_sessions_may_run``), since its
turns answer whoever asks the node.
"""

from __future__ import annotations

import re
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


DEFAULT_ASK = ("run",)
MAX_ASK = 32
_SERVER_TOOL = re.compile(r"([a-z][a-z0-9-]{0,31})(?:\.([A-Za-z0-9_.:/-]{1,128}))?\Z")


def parse_ask(given: str) -> tuple[str, ...]:
    """``run,files.delete`` as written on the command line; "" or "none": nothing asks."""
    parts = [part.strip() for part in given.split(",") if part.strip()]
    return () if [part.lower() for part in parts] == ["none"] else tuple(parts)


def check_ask(names: Iterable[str], servers: Iterable[str]) -> tuple[str, ...]:
    """Tools that ask first, each once, sorted: a workspace tool, or one of ``servers`` (the
    agent's MCP servers' names) or a tool of one. A name that fits nothing is refused, so a
    mistyped entry never leaves a tool acting unasked."""
    known = set(servers)
    wanted = set()
    for name in names:
        matched = _SERVER_TOOL.match(name)
        if name not in WORKSPACE_TOOLS and (matched is None or matched.group(1) not in known):
            raise Invalid(
                f"{name[:80]!r} is neither a workspace tool ({', '.join(WORKSPACE_TOOLS)}) nor one"
                f" of this agent's MCP servers ({', '.join(sorted(known)) or 'it has none'}) or a"
                " tool of one (SERVER.tool)",
                field="ask",
            )
        wanted.add(name)
    if len(wanted) > MAX_ASK:
        raise Invalid(f"an agent's ask list has at most {MAX_ASK} entries", field="ask")
    return tuple(sorted(wanted))


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
