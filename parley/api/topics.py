"""/api/v1/topics: any topic by id (a conversation, a task, an agent conversation, a node's
exchanges), as far as the caller may read it, and the pages of its text."""

from __future__ import annotations

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.ids import Id
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.base import Page, page_of
from parley.api.schemas.topics import MessageOut, TopicDetailOut
from parley.reads.details import topic_detail
from parley.reads.topics import messages_page, readable_topic

router = APIRouter(tags=["topics"])


@router.get("/topics/{topic_id}")
async def show_topic(topic_id: Id, caller: Caller, ctx: Ctx) -> TopicDetailOut:
    """Any topic by id, as far as you may read it."""
    async with ctx.store.transaction() as tx:
        topic = await readable_topic(tx, caller, topic_id)
        return TopicDetailOut.of(await topic_detail(tx, caller, topic))


@router.get("/topics/{topic_id}/messages")
async def topic_messages(
    topic_id: Id, caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[MessageOut]:
    """The topic's messages, newest first."""
    async with ctx.store.transaction() as tx:
        found = await messages_page(tx, caller, topic_id, limit, before)
    return page_of(found, MessageOut.of)
