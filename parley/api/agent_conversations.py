"""/api/v1/agent-conversations: what passes between roles, as far as the caller may read it."""

from __future__ import annotations

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.ids import OptionalId
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.base import Page, page_of
from parley.api.schemas.runs import StoppedOut
from parley.api.schemas.topics import TopicDetailOut, TopicOut
from parley.conversations.lifetime import stop_topic
from parley.reads.details import history_page, topic_detail
from parley.reads.topics import agent_conversations_page, readable_thread

router = APIRouter(tags=["agent conversations"])


@router.get("/agent-conversations")
async def list_agent_conversations(
    caller: Caller,
    ctx: Ctx,
    include_closed: bool = False,
    root: OptionalId = None,
    limit: Limit = DEFAULT_LIMIT,
    before: Before = None,
) -> Page[TopicOut]:
    """Agent conversations you may read, newest first; with ``root``, those rooted in that
    topic."""
    async with ctx.store.transaction() as tx:
        found = await agent_conversations_page(
            tx, caller, include_closed, root, limit=limit, before=before
        )
    return page_of(found, TopicOut.of_view)


@router.get("/agent-conversations/{thread_id}")
async def show_agent_conversation(thread_id: str, caller: Caller, ctx: Ctx) -> TopicDetailOut:
    """One agent conversation by its thread ID, with its text."""
    async with ctx.store.transaction() as tx:
        conversation = await readable_thread(tx, caller, thread_id)
        return TopicDetailOut.of(await topic_detail(tx, caller, conversation))


@router.post("/agent-conversations/{thread_id}/stop")
async def stop_agent_conversation(thread_id: str, caller: Caller, ctx: Ctx) -> StoppedOut:
    """Stop the turn in an agent conversation; the session is kept."""
    async with ctx.store.transaction() as tx:
        conversation = await readable_thread(tx, caller, thread_id)
        reason = f"stopped by {caller.name}"
        stopped = await stop_topic(tx, ctx.clock.now(), conversation, reason)
    return StoppedOut(stopped=[run.id for run in stopped])


@router.get("/agents/{role}/history/{peer}")
async def history_between(
    role: str,
    peer: str,
    caller: Caller,
    ctx: Ctx,
    limit: Limit = DEFAULT_LIMIT,
    before: Before = None,
) -> Page[TopicDetailOut]:
    """Every agent conversation between two roles the caller may read, newest first, with its
    text."""
    async with ctx.store.transaction() as tx:
        found = await history_page(tx, caller, role, peer, limit, before)
    return page_of(found, TopicDetailOut.of)
