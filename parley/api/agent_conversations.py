"""/api/v1/agent-conversations: what passes between roles, as far as the caller may read it."""

from __future__ import annotations

from fastapi import APIRouter

from parley.agents.lookup import agent_by_name
from parley.api.deps import Caller, Ctx
from parley.api.schemas.runs import StoppedOut
from parley.api.schemas.topics import TopicDetailOut, TopicOut
from parley.api.views import topic_detail, topics_out
from parley.conversations.lifetime import stop_topic
from parley.conversations.model import TopicKind
from parley.conversations.visibility import only_readable, readable_thread

router = APIRouter(tags=["agent conversations"])


@router.get("/agent-conversations")
async def list_agent_conversations(
    caller: Caller, ctx: Ctx, include_closed: bool = False
) -> list[TopicOut]:
    async with ctx.store.transaction() as tx:
        every = await tx.topics.of_kind(TopicKind.AGENT_CONVERSATION, include_closed)
        return await topics_out(tx, await only_readable(tx, caller, every))


@router.get("/agent-conversations/{thread_id}")
async def show_agent_conversation(thread_id: str, caller: Caller, ctx: Ctx) -> TopicDetailOut:
    async with ctx.store.transaction() as tx:
        return await topic_detail(tx, caller, await readable_thread(tx, caller, thread_id))


@router.post("/agent-conversations/{thread_id}/stop")
async def stop_agent_conversation(thread_id: str, caller: Caller, ctx: Ctx) -> StoppedOut:
    async with ctx.store.transaction() as tx:
        conversation = await readable_thread(tx, caller, thread_id)
        reason = f"stopped by {caller.name}"
        stopped = await stop_topic(tx, ctx.clock.now(), conversation, reason)
    return StoppedOut(stopped=[run.id for run in stopped])


@router.get("/agents/{role}/history/{peer}")
async def history_between(role: str, peer: str, caller: Caller, ctx: Ctx) -> list[TopicDetailOut]:
    """Every agent conversation between two roles the caller may read, with its text."""
    async with ctx.store.transaction() as tx:
        first, second = await agent_by_name(tx, role), await agent_by_name(tx, peer)
        between = await tx.topics.agent_conversations_between(first.id, second.id)
        return [
            await topic_detail(tx, caller, topic)
            for topic in await only_readable(tx, caller, between)
        ]
