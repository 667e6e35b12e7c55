"""An MCP tool's result as a model reads it. Apart from the specs (``mcp_spec.py``), which the
hub reads too: only a node calling tools loads MCP's types."""

from __future__ import annotations

import base64
import json

import mcp_types as types


def result_text(result: types.CallToolResult, cap: int) -> str:
    """A tool's result as a model reads it: its texts, one line for anything else, at most
    ``cap`` bytes (then a note of what was dropped)."""
    parts = [_block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False)]
    text = "\n".join(parts) or "(no output)"
    data = text.encode()
    if len(data) <= cap:
        return text
    kept = data[:cap].decode(errors="ignore")  # a character cut in two is dropped whole
    dropped = len(data) - len(kept.encode())
    return f"{kept}\n[{dropped} more bytes of the result dropped: only the first {cap} are kept]"


def _block_text(block: types.ContentBlock) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        return f"[a link to {block.uri}{f', {block.mime_type}' if block.mime_type else ''}]"
    resource = block.resource
    if isinstance(resource, types.TextResourceContents):
        return f"[{resource.uri}]\n{resource.text}"
    return f"[{resource.uri}, {resource.mime_type or 'data'}, {_decoded_size(resource.blob)} bytes]"


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return len(data) * 3 // 4
