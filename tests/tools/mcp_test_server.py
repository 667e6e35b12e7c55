"""An MCP server for the tests of ``parley/tools/mcp_servers.py``, written with the ``mcp``
library's own server: run as a script it serves stdio; ``http_app()`` serves streamable HTTP.

Its tools show what the client must handle: its pid (reused or not), an error, a sleep past
the call's time, dying mid-call, a big result, an image, its environment, the HTTP headers."""

from __future__ import annotations

import os
import time
from typing import Any

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ContentBlock, TextContent

# A 1x1 transparent PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)

server: MCPServer[Any] = MCPServer("parley-test", log_level="WARNING")


@server.tool(description="Says the text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="Adds two numbers.")
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="This server's process id.")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Always refuses, saying why.")
def refuse(reason: str) -> str:
    raise ToolError(reason)


@server.tool(description="Sleeps, then says so.")
def sleep(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


@server.tool(description="Ends this server at once, mid-call.")
def die() -> str:
    os._exit(3)


@server.tool(description="A text of `size` letters.")
def big(size: int) -> str:
    return "a" * size


@server.tool(description="A word and a tiny image.")
def picture() -> list[ContentBlock]:
    return [
        TextContent(type="text", text="a dot:"),
        Image(data=PNG, format="png").to_image_content(),
    ]


@server.tool(description="The value of an environment variable, or (unset).")
def variable(name: str) -> str:
    return os.environ.get(name, "(unset)")


@server.tool(description="The Authorization header this request came with.")
def authorization(ctx: Context) -> str:
    return (ctx.headers or {}).get("authorization", "(none)")


def http_app() -> Any:
    return server.streamable_http_app()


if __name__ == "__main__":
    server.run()
