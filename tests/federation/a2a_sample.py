"""An A2A agent of a2a-sdk's own making, served on a loopback port, as any A2A platform's
would be: its card, JSON-RPC, the SDK's task store and request handler. What it does hangs on
the text it is sent: ``fail …`` fails, ``slow …`` works until cancelled, ``ask …`` asks back
(and completes with the answer), anything else is echoed back as its artifact. It asks for a
bearer token, as a real one would."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    TaskState,
)
from a2a.utils.constants import TransportProtocol
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from bench.ports import free_port

TOKEN = "sample-secret"


@dataclass
class Seen:
    """What the sample agent saw: each text, each cancel."""

    texts: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)  # each JSON-RPC method called


class SampleExecutor(AgentExecutor):
    def __init__(self, seen: Seen) -> None:
        self.seen = seen
        self.stops: dict[str, asyncio.Event] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        self.seen.texts.append(text)
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        self.seen.contexts.append(task.context_id)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def said(words: str) -> Message:
            return new_text_message(words, context_id=task.context_id, task_id=task.id)

        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([new_text_part(f"you chose: {text}")])
            await updater.complete()
        elif text.startswith("fail"):
            await updater.failed(said("could not do it"))
        elif text.startswith("ask"):
            await updater.requires_input(said("which one?"))
        elif text.startswith("slow"):
            await updater.start_work()
            stop = self.stops.setdefault(task.id, asyncio.Event())
            try:
                await asyncio.wait_for(stop.wait(), 60)
            except TimeoutError:
                await updater.complete()
        else:
            await updater.add_artifact([new_text_part(f"echo: {text}")])
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None
        self.seen.cancelled.append(context.task_id)
        self.stops.setdefault(context.task_id, asyncio.Event()).set()
        await TaskUpdater(event_queue, context.task_id, context.context_id or "").cancel()


class _Methods:
    """Notes each JSON-RPC call's method, as its body passes; with ``hold``, the answer to a
    text starting ``hold`` waits for it to be set (the agent took the text meanwhile)."""

    def __init__(self, app: ASGIApp, seen: Seen, hold: threading.Event | None = None) -> None:
        self.app, self.seen, self.hold = app, seen, hold

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = bytearray()

        async def noting() -> AsgiMessage:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body"):
                    with contextlib.suppress(ValueError, AttributeError):
                        self.seen.methods.append(json.loads(body)["method"])
            return message

        async def holding(message: AsgiMessage) -> None:
            if self.hold is not None and b'"text": "hold' in bytes(body).replace(b'":"', b'": "'):
                await asyncio.to_thread(self.hold.wait, 60)
            await send(message)

        await self.app(scope, noting, holding)


class _Bearer(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.url.path.endswith("agent-card.json"):
            return await call_next(request)
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return JSONResponse({"error": "no token"}, status_code=401)
        return await call_next(request)


def card(url: str, streaming: bool = False) -> AgentCard:
    return AgentCard(
        name="Sample Agent",
        description="echoes, fails, asks back, works slowly",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=url, protocol_binding=TransportProtocol.JSONRPC, protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="echo_back", name="echo", description="echo", tags=["echo"]),
            AgentSkill(id="Summarise", name="summarise", description="sum", tags=["sum"]),
        ],
    )


@contextmanager
def sample_agent(
    streaming: bool = False, hold: threading.Event | None = None, card_host: str = "127.0.0.1"
) -> Iterator[tuple[str, Seen]]:
    """The agent's URL while it runs, and what it saw (``streaming``: what its card says;
    ``hold``: what the answer to a text starting ``hold`` waits for; ``card_host``: the host
    its card names for its interface, on the same port)."""
    port, seen = free_port(), Seen()
    url = f"http://127.0.0.1:{port}"
    served_card = card(f"http://{card_host}:{port}/", streaming)
    handler = DefaultRequestHandler(
        agent_executor=SampleExecutor(seen), task_store=InMemoryTaskStore(), agent_card=served_card
    )
    app = Starlette(
        routes=[*create_agent_card_routes(served_card), *create_jsonrpc_routes(handler, "/")],
        middleware=[Middleware(_Methods, seen=seen, hold=hold), Middleware(_Bearer)],
    )
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the sample A2A agent did not start")
        threading.Event().wait(0.02)
    try:
        yield url, seen
    finally:
        server.should_exit = True
        thread.join(timeout=10)
