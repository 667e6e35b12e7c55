"""A fake Anthropic Messages API server: real wire protocol, scripted replies."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from tests.brains.fakes import Reply, Script, args_pieces, pieces, sse


def anthropic_app(script: Script) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/messages")
    async def messages(request: Request) -> Response:
        body: dict[str, Any] = await request.json()
        reply = script.next(body, dict(request.headers))
        if reply.raw is not None:
            return Response(reply.raw, media_type="text/html")
        if reply.status != 200:
            bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
            key = request.headers.get("x-api-key", bearer)
            message = reply.text.replace("{key}", key)
            error = {"type": "error", "error": {"type": "api_error", "message": message}}
            return JSONResponse(error, status_code=reply.status)
        if not body.get("stream"):
            return JSONResponse(_message(body["model"], reply))
        return StreamingResponse(_stream(body["model"], reply), media_type="text/event-stream")

    return app


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.calls else "end_turn"


def _blocks(reply: Reply, *, whole: bool) -> list[dict[str, Any]]:
    """The reply's content blocks; a stream starts each one empty and fills it with deltas."""
    text = reply.text if whole else ""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if reply.text else []
    for index, call in enumerate(reply.calls):
        tool_input = call.args if whole else {}
        block = {"type": "tool_use", "id": f"toolu_{index}", "name": call.name, "input": tool_input}
        blocks.append(block)
    return blocks


def _message(model: str, reply: Reply) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _blocks(reply, whole=True),
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


async def _stream(model: str, reply: Reply) -> AsyncIterator[bytes]:
    for event in _events(model, reply):
        yield sse(event, event=event["type"])


def _events(model: str, reply: Reply) -> Iterator[dict[str, Any]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    start = {**_message(model, reply), "content": [], "stop_reason": None, "usage": usage}
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for index, block in enumerate(_blocks(reply, whole=False)):
        yield {"type": "content_block_start", "index": index, "content_block": block}
        for delta in _deltas(reply, block):
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    delta = {"stop_reason": _stop_reason(reply), "stop_sequence": None}
    yield {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 5}}
    yield {"type": "message_stop"}


def _deltas(reply: Reply, block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "text":
        return [{"type": "text_delta", "text": piece} for piece in pieces(reply.text)]
    args = reply.calls[int(block["id"].removeprefix("toolu_"))].args
    return [{"type": "input_json_delta", "partial_json": piece} for piece in args_pieces(args)]
