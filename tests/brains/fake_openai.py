"""A fake OpenAI chat-completions server: real wire protocol, scripted replies."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from tests.brains.fakes import Reply, Script, ToolCall, args_pieces, pieces, sse


def openai_app(script: Script) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> Response:
        body: dict[str, Any] = await request.json()
        reply = script.next(body, dict(request.headers))
        if reply.raw is not None:
            return Response(reply.raw, media_type="text/html")
        if reply.status != 200:
            key = request.headers.get("authorization", "").removeprefix("Bearer ")
            message = reply.text.replace("{key}", key)
            error = {"message": message, "type": "server_error", "code": None}
            return JSONResponse({"error": error}, status_code=reply.status)
        if not body.get("stream"):
            return JSONResponse(_completion(body["model"], reply))
        include_usage = bool(body.get("stream_options", {}).get("include_usage"))
        events = _stream(body["model"], reply, include_usage)
        return StreamingResponse(events, media_type="text/event-stream")

    return app


def _tool_call(index: int, call: ToolCall) -> dict[str, Any]:
    function = {"name": call.name, "arguments": json.dumps(call.args)}
    return {"id": f"call_{index}", "type": "function", "function": function}


def _finish(reply: Reply) -> str:
    return "tool_calls" if reply.calls else "stop"


def _usage() -> dict[str, int]:
    return {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _completion(model: str, reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [_tool_call(i, call) for i, call in enumerate(reply.calls)]
    choice = {"index": 0, "message": message, "finish_reason": _finish(reply), "logprobs": None}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": _usage(),
    }


async def _stream(model: str, reply: Reply, include_usage: bool) -> AsyncIterator[bytes]:
    def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        head = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0}
        return sse({**head, "model": model, "choices": choices, **extra})

    for delta, finish in _deltas(reply):
        yield chunk([{"index": 0, "delta": delta, "finish_reason": finish}])
    if include_usage:
        yield chunk([], usage=_usage())
    yield sse("[DONE]")


def _deltas(reply: Reply) -> Iterator[tuple[dict[str, Any], str | None]]:
    yield {"role": "assistant", "content": ""}, None
    if reply.text:
        for piece in pieces(reply.text):
            yield {"content": piece}, None
    for index, call in enumerate(reply.calls):
        # The first delta of a call names it; its arguments follow in fragments.
        function = {"name": call.name, "arguments": ""}
        head = {"index": index, "id": f"call_{index}", "type": "function", "function": function}
        yield {"tool_calls": [head]}, None
        for piece in args_pieces(call.args):
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, None
    yield {}, _finish(reply)
