"""A small MCP server for the tests, written with the ``mcp`` library: run as a script it
speaks stdio; ``http_app()`` is the same server over streamable HTTP."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from mcp.server import MCPServer

server = MCPServer("parley-test")
# What the HTTP app was sent, for the tests to read (the Authorization header).
SEEN_HEADERS: list[dict[str, str]] = []


@server.tool(description="says the text back")
def echo(text: str) -> str:
    return text


@server.tool(description="adds two numbers")
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="the server's process id")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="an environment variable's value, or (unset)")
def variable(name: str) -> str:
    return os.environ.get(name, "(unset)")


@server.tool(description="fails, as a tool may")
def refuse(why: str) -> str:
    raise ValueError(why)


@server.tool(description="sleeps")
def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


@server.tool(description="a long text")
def big(size: int) -> str:
    return "b" * size


@server.tool(description="the server dies")
def die() -> str:
    os._exit(3)


def http_app() -> Any:
    return server.streamable_http_app()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--crash":
        print("cannot open the database: no such file", file=sys.stderr, flush=True)
        sys.exit(2)
    if len(sys.argv) > 1 and sys.argv[1] == "--mute":
        sys.stdin.read()  # reads, never answers
        sys.exit(0)
    server.run("stdio")
