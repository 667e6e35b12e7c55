"""An MCP server's spec is checked where it is made, and a tool's result reads as text."""

from __future__ import annotations

import base64

import mcp_types as types
import pytest

from parley.errors import Invalid
from parley.tools.mcp_results import result_text
from parley.tools.mcp_spec import McpServerSpec, header_values


def test_a_spec_is_checked() -> None:
    with pytest.raises(Invalid, match="name"):
        McpServerSpec("Files", command="x")
    with pytest.raises(Invalid, match="either a command or a URL"):
        McpServerSpec("files")
    with pytest.raises(Invalid, match="either a command or a URL"):
        McpServerSpec("files", command="x", url="https://example.com/mcp")
    with pytest.raises(Invalid, match="URL must be"):
        McpServerSpec("files", url="ftp://example.com/mcp")
    with pytest.raises(Invalid, match="does not parse"):
        McpServerSpec("files", command="x 'unclosed")
    with pytest.raises(Invalid, match="headers are for a server reached by URL"):
        McpServerSpec("files", command="x", headers_from_env={"Authorization": "TOKEN"})


def test_header_values_are_read_from_the_environment_and_a_missing_one_is_named() -> None:
    spec = McpServerSpec("remote", url="https://example.com/mcp", headers_from_env={"X-Key": "K"})
    assert header_values(spec, {"K": "value"}) == {"X-Key": "value"}
    with pytest.raises(Invalid, match="takes a header from K, which") as raised:
        header_values(spec, {})
    assert "value" not in str(raised.value)


def test_a_result_reads_as_text_with_one_line_for_each_other_kind() -> None:
    image = base64.b64encode(b"x" * 1234).decode()
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="first"),
            types.ImageContent(type="image", data=image, mime_type="image/png"),
            types.ResourceLink(type="resource_link", name="n", uri="file:///a.txt"),
        ]
    )
    assert result_text(result, 1000) == "first\n[image/png, 1234 bytes]\n[a link to file:///a.txt]"
    assert result_text(types.CallToolResult(content=[]), 1000) == "(no output)"


def test_a_result_is_cut_on_a_whole_character() -> None:
    result = types.CallToolResult(content=[types.TextContent(type="text", text="é" * 10)])
    kept, note = result_text(result, 5).split("\n")
    assert kept == "éé"
    assert note == "[16 more bytes of the result dropped: only the first 5 are kept]"
