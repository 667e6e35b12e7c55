"""/api/v1/conversations: a person's own conversations with agents (at most one per agent)."""

from __future__ import annotations

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.schemas.runs import StoppedOut
from parley.api.schemas.topics import QueuedOut, TextIn, TopicDetailOut, TopicOut
from parley.api.views import topic_detail, topics_out
from parley.conversations.lifetime import stop_root
from parley.conversations.model import TopicKind
from parley.conversations.person import conversation_with, delete_conversation, say

router = APIRouter(tags=["conversations"])


@router.get("/conversations")
async def my_conversations(caller: Caller, ctx: Ctx) -> list[TopicOut]:
    async with ctx.store.transaction() as tx:
        mine = [
            topic
            for topic in await tx.topics.of_kind(TopicKind.CONVERSATION)
            if topic.person_id == caller.id
        ]
        return await topics_out(tx, mine)


@router.post("/conversations/{agent}/messages", status_code=202)
async def say_to(agent: str, body: TextIn, caller: Caller, ctx: Ctx) -> QueuedOut:
    """Give text to the agent in your conversation with it; its reply comes in a run."""
    async with ctx.store.transaction() as tx:
        queued = await say(tx, ctx.clock, caller, agent, body.text)
    return QueuedOut.of(queued)


@router.get("/conversations/{agent}")
async def show_conversation(agent: str, caller: Caller, ctx: Ctx) -> TopicDetailOut:
    async with ctx.store.transaction() as tx:
        return await topic_detail(tx, caller, await conversation_with(tx, caller, agent))


@router.delete("/conversations/{agent}", status_code=204)
async def delete(agent: str, caller: Caller, ctx: Ctx) -> None:
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
