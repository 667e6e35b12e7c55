"""/api/v1/conversations: a person's own conversations with agents (at most one open per agent);
deleted ones are the owners'."""

from __future__ import annotations

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.base import Page, page_of
from parley.api.schemas.runs import StoppedOut
from parley.api.schemas.topics import QueuedOut, TextIn, TopicDetailOut, TopicOut
from parley.conversations.lifetime import stop_root
from parley.conversations.person import conversation_with, delete_conversation, say
from parley.reads.details import topic_detail
from parley.reads.topics import conversations_page, readable_conversation

router = APIRouter(tags=["conversations"])


@router.get("/conversations")
async def my_conversations(
    caller: Caller,
    ctx: Ctx,
    deleted: bool = False,
    limit: Limit = DEFAULT_LIMIT,
    before: Before = None,
) -> Page[TopicOut]:
    """Your open conversations, newest first; with ``deleted``, the deleted ones you may read
    too (owners read every deleted conversation)."""
    async with ctx.store.transaction() as tx:
        found = await conversations_page(tx, caller, deleted, limit, before)
    return page_of(found, TopicOut.of_view)


@router.post("/conversations/{agent}/messages", status_code=202)
async def say_to(agent: str, body: TextIn, caller: Caller, ctx: Ctx) -> QueuedOut:
    """Give text to the agent in your conversation with it; its reply comes in a run."""
    async with ctx.store.transaction() as tx:
        queued = await say(tx, ctx.clock, caller, agent, body.text)
    return QueuedOut.of(queued)


@router.get("/conversations/{ref}")
async def show_conversation(ref: str, caller: Caller, ctx: Ctx) -> TopicDetailOut:
    """By agent name, your open conversation with that agent; by id, any conversation you may
    read (a deleted one: owners)."""
    async with ctx.store.transaction() as tx:
        conversation = await readable_conversation(tx, caller, ref)
        return TopicDetailOut.of(await topic_detail(tx, caller, conversation))


@router.delete("/conversations/{agent}", status_code=204)
async def delete(agent: str, caller: Caller, ctx: Ctx) -> None:
    """Delete your conversation with the agent: its runs end, its agent conversations close."""
    async with ctx.store.transaction() as tx:
        await delete_conversation(tx, ctx.clock, caller, agent)


@router.post("/conversations/{agent}/stop")
async def stop(agent: str, caller: Caller, ctx: Ctx) -> StoppedOut:
    """Stop the agent's turn in your conversation and the text waiting behind it, and every
    agent's work under it: its agent conversations and subtasks, at any depth."""
    async with ctx.store.transaction() as tx:
        conversation = await conversation_with(tx, caller, agent)
        reason = f"stopped by {caller.name}"
        stopped = await stop_root(tx, ctx.clock.now(), conversation, reason)
    return StoppedOut(stopped=[run.id for run in stopped])
