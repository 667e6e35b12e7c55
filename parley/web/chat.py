"""The chat pages: a person's conversations with agents, each a page where text goes in, the
reply streams in as the turn writes it, and Stop stops the turn (and everything under it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse

from parley.agents.model import Agent, Lifecycle
from parley.api.ids import Id
from parley.context import Context
from parley.conversations.lifetime import stop_root
from parley.conversations.model import Message, Topic
from parley.conversations.person import conversation_with, say
from parley.errors import Invalid, NotFound
from parley.hub.watch import WatchEvent
from parley.people.model import Person
from parley.reads.agents import agents_page
from parley.reads.details import newest_in_roots
from parley.reads.model import MAX_LIMIT, Newest
from parley.reads.runs import readable_run, runs_page
from parley.reads.topics import conversations_page, messages_page
from parley.runs.model import Run, RunState
from parley.store import Tx
from parley.web.live import NO_CACHE, chunk_event, event
from parley.web.parts import live_values
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, Viewer, WebParts, as_page

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])
QUIET_SECONDS = 15  # a stream says it is still there this often
HOME_AGENTS = 50  # agents the home page lists; the rest are a name away, and on /agents
HISTORY = 100  # the newest messages a chat shows; older ones are on the topic's own list


@dataclass(frozen=True)
class Entry:
    """A message of the chat, with the run whose text it was when that run did not finish; and
    for what a turn had said when it was cut short, that turn's run (if still on the page)."""

    message: Message
    ended_as: Run | None
    said_in: Run | None = None


@dataclass(frozen=True)
class Chat:
    agent: str
    topic: Topic | None
    entries: list[Entry]
    open_runs: list[Run]


@router.get("/")
async def home(
    request: Request, viewer: Viewer, ctx: Ctx, web: WebParts, before: str | None = None
) -> Response:
    async with ctx.store.transaction() as tx:
        mine = await conversations_page(tx, viewer.person, limit=HOME_AGENTS, before=before)
        newest = await newest_in_roots(tx, [view.topic for view in mine.items], 1)
        agents = await talkable(tx, HOME_AGENTS)
    glances = {topic_id: Glance.of(found) for topic_id, found in newest.items()}
    return web.pages.page(
        request, "home.html", viewer, conversations=mine, glances=glances, agents=agents,
        shown=HOME_AGENTS,
    )  # fmt: skip


@dataclass(frozen=True)
class Glance:
    """A conversation at a glance: what was said last, and whether a turn runs or failed."""

    last: Message | None
    running: bool
    failed: bool

    @staticmethod
    def of(newest: Newest) -> Glance:
        run = newest.runs.items[0] if newest.runs.items else None
        last = newest.messages.items[0] if newest.messages.items else None
        failed = run is not None and run.state is RunState.FAILED
        return Glance(last, run is not None and run.is_open, failed)


@router.get("/chat")
async def chat_by_name(viewer: Viewer, agent: str = "") -> Response:
    """The home page's "open the chat" form, without JavaScript: to that agent's chat."""
    name = agent.strip()
    if not name:
        raise Invalid("name the agent to talk to", field="agent")
    return RedirectResponse(f"/chat/{quote(name, safe='')}", status_code=303)


@router.get("/chat/{agent}")
async def chat_page(
    agent: str, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts
) -> Response:
    chat = await read_chat(ctx, viewer.person, agent)
    return web.pages.page(request, "chat.html", viewer, chat=chat)


@router.get("/chat/{agent}/live")
async def chat_live(
    agent: str, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts
) -> Response:
    await read_chat(ctx, viewer.person, agent)  # the page's refusal, before streaming

    async def read(person: Person) -> dict[str, Any]:
        return {"chat": await read_chat(ctx, person, agent)}

    return live_values(request, ctx, web, "_chat.html", read)


@router.post("/chat/{agent}")
async def chat_say(agent: str, posted: Post, ctx: Ctx) -> Response:
    text = posted.form.get("text")
    async with ctx.store.transaction() as tx:
        await say(tx, ctx.clock, posted.viewer.person, agent, text)
    return back_to(f"/chat/{agent}")


@router.post("/chat/{agent}/stop")
async def chat_stop(agent: str, posted: Post, ctx: Ctx) -> Response:
    person = posted.viewer.person
    async with ctx.store.transaction() as tx:
        conversation = await conversation_with(tx, person, agent)
        stopped = await stop_root(tx, ctx.clock.now(), conversation, f"stopped by {person.name}")
    said = f"Stopped {len(stopped)} turn(s)." if stopped else "Nothing was running."
    return back_to(f"/chat/{agent}", said)


@router.get("/runs/{run_id}/stream")
async def run_stream(run_id: Id, viewer: Viewer, ctx: Ctx, web: WebParts) -> Response:
    """The reply of a run as its turn writes it: ``chunk`` events (JSON strings), then ``end``."""
    async with ctx.store.transaction() as tx:
        await readable_run(tx, viewer.person, run_id)
    chunks = _chunks(ctx, web.pulse.closing, run_id)
    return StreamingResponse(chunks, media_type="text/event-stream", headers=NO_CACHE)


async def _chunks(ctx: Context, closing: asyncio.Event, run_id: int) -> AsyncIterator[bytes]:
    with ctx.runtime.watch.watching(run_id) as queue:
        async with ctx.store.transaction() as tx:
            state = await tx.runs.state_of(run_id)
        if state is None or state.value not in ("queued", "running"):
            yield event("end", state.value if state else "gone")
            return
        while not closing.is_set():
            watched = await _next(queue, closing)
            if watched is None:
                yield b": still here\n\n"
                continue
            if watched.kind == "chunk":
                yield chunk_event(watched.text)
            elif watched.kind == "end":
                yield event("end", watched.text)
                return


async def _next(queue: asyncio.Queue[WatchEvent], closing: asyncio.Event) -> WatchEvent | None:
    """The run's next event; None after a quiet while, or when the server stops."""
    getting, stopping = asyncio.ensure_future(queue.get()), asyncio.ensure_future(closing.wait())
    done, pending = await asyncio.wait(
        {getting, stopping}, timeout=QUIET_SECONDS, return_when=asyncio.FIRST_COMPLETED
    )
    for task in pending:
        task.cancel()
    return getting.result() if getting in done else None


async def read_chat(ctx: Context, person: Person, agent: str) -> Chat:
    async with ctx.store.transaction() as tx:
        try:
            topic = await conversation_with(tx, person, agent)
        except NotFound:
            addressed = await tx.agents.by_name(agent)
            if addressed is None:
                raise
            return Chat(addressed.name, None, [], [])
        messages = await messages_page(tx, person, topic.id, limit=HISTORY)
        runs = await runs_page(tx, person, topic=topic.id, limit=HISTORY)
    by_id = {run.id: run for run in runs.items}
    entries = [
        Entry(
            message,
            _unfinished(by_id.get(message.run_id or 0)),
            by_id.get(message.from_run_id or 0) if message.cut_short else None,
        )
        for message in reversed(messages.items)
    ]
    open_runs = [run for run in reversed(runs.items) if run.is_open]
    return Chat(topic.addressed_name or topic.agent_name, topic, entries, open_runs)


def _unfinished(run: Run | None) -> Run | None:
    return run if run is not None and run.state.value in ("stopped", "failed") else None


async def talkable(tx: Tx, limit: int = MAX_LIMIT) -> list[Agent]:
    """Agents a person may start a conversation with: active ones (templates too: their
    clones answer), not node sessions."""
    found = await agents_page(tx, [Lifecycle.ACTIVE], limit=limit)
    return [agent for agent in found.items if not agent.is_node_session]
