"""What an agent's own MCP server is (``McpServerSpec``: a command run over stdio, or a
streamable HTTP URL), what it offers (``McpTool``), and how a tool's result reads for a model.

A spec names no secret: an HTTP header's value is the name of one of the node's environment
variables, read when the server is started (``header_values``), never stored."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from parley.errors import Invalid

NAME = re.compile(r"[a-z][a-z0-9-]{0,31}\Z")
HEADER = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}\Z")  # an HTTP token (RFC 9110)
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")


@dataclass(frozen=True)
class McpServerSpec:
    """One of an agent's MCP servers: exactly one of ``command`` (stdio, run confined in the
    agent's workspace) and ``url`` (streamable HTTP)."""

    name: str
    command: str | None = None
    url: str | None = None
    # HTTP header name -> name of the node's environment variable holding its value.
    headers_from_env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_spec(self)

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.command or "")


@dataclass(frozen=True)
class McpTool:
    server: str
    name: str  # the server's own name for it
    description: str
    input_schema: dict[str, Any]


def check_spec(spec: McpServerSpec) -> None:
    """Invalid, saying what to fix, unless ``spec`` can be started."""
    if not NAME.match(spec.name):
        raise Invalid(
            f"MCP server name {spec.name[:40]!r} is not valid: a lowercase letter, then a-z, 0-9"
            " and -, at most 32 characters",
            field="name",
        )
    if (spec.command is None) == (spec.url is None):
        raise Invalid(f"MCP server {spec.name}: give either a command or a URL, not both")
    if spec.command is not None:
        _check_command(spec)
    else:
        _check_url(spec)


def _check_command(spec: McpServerSpec) -> None:
    if spec.headers_from_env:
        raise Invalid(f"MCP server {spec.name}: headers are for a server reached by URL")
    try:
        argv = spec.argv
    except ValueError as error:
        raise Invalid(f"MCP server {spec.name}: its command does not parse: {error}") from None
    if not argv or "\0" in (spec.command or ""):
        raise Invalid(f"MCP server {spec.name}: its command is empty or holds a NUL")


def _check_url(spec: McpServerSpec) -> None:
    parts = urlsplit(spec.url or "")
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise Invalid(f"MCP server {spec.name}: its URL must be https://host/… (or http://)")
    for header, variable in spec.headers_from_env.items():
        if not HEADER.match(header) or not VARIABLE.match(variable):
            raise Invalid(
                f"MCP server {spec.name}: header {header[:128]!r} from variable"
                f" {variable[:128]!r}: a header name is an HTTP token, a variable's name"
                " A-Z, a-z, 0-9 and _",
                field="headers_from_env",
            )


def header_values(spec: McpServerSpec, environment: Mapping[str, str]) -> dict[str, str]:
    """The headers of ``spec`` with their values read from ``environment`` now; Invalid naming
    (never showing) a variable that is not set."""
    missing = [name for name in spec.headers_from_env.values() if name not in environment]
    if missing:
        raise Invalid(
            f"MCP server {spec.name} takes a header from {', '.join(missing)}, which this"
            " node's environment does not set"
        )
    return {header: environment[name] for header, name in spec.headers_from_env.items()}
