"""An agent's own MCP servers: each a name, and either a command its node starts (stdio) or a
URL (streamable HTTP) with headers whose values its node reads from its environment by name, so
that no secret is ever stored. Their tools are offered to its model brain as ``NAME.tool``.

A node session has none unless the operator grants it (``node_sessions_may_run``, which grants
commands: a stdio server is one)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from parley.agents.model import McpServer
from parley.errors import Forbidden, Invalid
from parley.text import refuse_nul
from parley.tools.mcp_spec import McpServerSpec

MAX_SERVERS = 8
MAX_TARGET = 4096
MAX_HEADERS = 8


def check_server(server: McpServer) -> McpServer:
    """A server as an agent may have it, or Invalid saying what is wrong: the rules of a spec
    its node can start (``tools/mcp_spec.py``), and what is stored (no credentials in a URL,
    bounded sizes)."""
    where = f"MCP server {server.name[:40]!r}"
    target = server.target
    refuse_nul(target, where)
    if len(target) > MAX_TARGET or len(server.headers) > MAX_HEADERS:
        raise Invalid(
            f"{where}: a command or URL is at most {MAX_TARGET} characters, with at most"
            f" {MAX_HEADERS} headers",
            field="mcp",
        )
    McpServerSpec(server.name, server.command, server.url, dict(server.headers))  # checks it
    if server.url is not None:
        parts = urlsplit(server.url)
        if parts.username or parts.password:
            raise Invalid(
                f"{where}: no credentials in its URL; give a header from an environment"
                " variable (--mcp-header NAME:Authorization=VARIABLE)",
                field="mcp",
            )
    return server


def check_servers(servers: Sequence[McpServer]) -> tuple[McpServer, ...]:
    names = [server.name for server in servers]
    if len(set(names)) != len(names):
        raise Invalid("each MCP server of an agent has a name of its own", field="mcp")
    if len(servers) > MAX_SERVERS:
        raise Invalid(f"an agent has at most {MAX_SERVERS} MCP servers", field="mcp")
    return tuple(sorted((check_server(server) for server in servers), key=lambda s: s.name))


def merged(
    current: Iterable[McpServer], given: Iterable[McpServer], unset: Iterable[str]
) -> tuple[McpServer, ...]:
    """``current`` with ``given`` added or replacing theirs by name, and ``unset`` removed."""
    by_name = {server.name: server for server in current}
    for name in unset:
        if name not in by_name:
            raise Invalid(f"there is no MCP server {name!r} to remove", field="unset_mcp")
        del by_name[name]
    by_name.update((server.name, server) for server in given)
    return check_servers(list(by_name.values()))


def check_node_session_servers(node: str, servers: Sequence[McpServer], granted: bool) -> None:
    if servers and not granted:
        raise Forbidden(
            f"node {node}'s session may not have MCP servers: a node session's tools are"
            " narrower than a hired agent's unless the operator grants it"
            " (node_sessions_may_run = true in the settings)"
        )


def parse_server(given: str) -> McpServer:
    """``NAME=COMMAND`` or ``NAME=https://…``, as the command line writes one."""
    name, equals, target = given.partition("=")
    if not equals:
        raise Invalid(f"--mcp {given!r}: give NAME=COMMAND or NAME=https://URL", field="mcp")
    target = target.strip()
    if urlsplit(target).scheme in ("http", "https"):
        return McpServer(name.strip(), url=target)
    return McpServer(name.strip(), command=target)


def with_headers(servers: Sequence[McpServer], given: Iterable[str]) -> list[McpServer]:
    """``NAME:Header=VARIABLE`` added to the server NAME of ``servers``."""
    headers: dict[str, dict[str, str]] = {}
    for item in given:
        server, colon, rest = item.partition(":")
        header, equals, variable = rest.partition("=")
        if not colon or not equals:
            raise Invalid(f"--mcp-header {item!r}: give NAME:Header=VARIABLE", field="mcp")
        headers.setdefault(server, {})[header] = variable
    names = {server.name for server in servers}
    for server in headers:
        if server not in names:
            raise Invalid(f"--mcp-header names {server!r}, which no --mcp gives", field="mcp")
    return [
        McpServer(s.name, s.command, s.url, _pairs({**dict(s.headers), **headers.get(s.name, {})}))
        for s in servers
    ]


def _pairs(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(headers.items()))
