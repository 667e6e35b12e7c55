"""A root's page: every agent conversation rooted in a person's conversation or a task, drawn
as who asked whom, each with its text and runs; kept current as a live part. What the reader may
not read of the root is the same 404 as a root that does not exist (``readable_topic``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from parley.api.ids import Id
from parley.context import Context
from parley.conversations.model import Message, Topic
from parley.people.model import Person
from parley.reads.details import newest_in_tree
from parley.reads.model import MAX_LIMIT, Newest
from parley.reads.topics import readable_topic, rooted_in
from parley.runs.model import Run
from parley.store import Tx
from parley.web.parts import live_values
from parley.web.routing import Ctx, Viewer, WebParts, as_page
from parley.web.tree import build_tree, walk

router = APIRouter(include_in_schema=False, dependencies=[Depends(as_page)])
MOST = 500  # agent conversations drawn for one root; past it the page says so
EACH = 20  # the newest messages and runs shown per conversation


@dataclass(frozen=True)
class Inside:
    """What one agent conversation holds, as the page shows it: oldest message first."""

    messages: list[Message]
    more_messages: bool
    runs: list[Run]


@router.get("/roots/{topic_id}")
async def root_page(
    topic_id: Id, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts
) -> Response:
    values = await read_root(ctx, viewer.person, topic_id)
    return web.pages.page(request, "root.html", viewer, **values)


@router.get("/roots/{topic_id}/live")
async def root_live(
    topic_id: Id, request: Request, viewer: Viewer, ctx: Ctx, web: WebParts
) -> Response:
    await read_root(ctx, viewer.person, topic_id)  # the page's refusal, before streaming

    async def read(person: Person) -> dict[str, Any]:
        return await read_root(ctx, person, topic_id)

    return live_values(request, ctx, web, "_root.html", read)


async def read_root(ctx: Context, person: Person, topic_id: int) -> dict[str, Any]:
    async with ctx.store.transaction() as tx:
        root = await readable_topic(tx, person, topic_id)
        conversations, complete = await _rooted_in(tx, person, root)
        tree = build_tree(root, conversations)
        shown = [node.topic for node in walk(tree)]
        # Two statements for the whole tree: per conversation, they were a GET's most.
        newest = await newest_in_tree(tx, root, shown, EACH)
    inside = {shown_id: _inside(found) for shown_id, found in newest.items()}
    return {"root": root, "tree": tree, "inside": inside, "complete": complete}


async def _rooted_in(tx: Tx, person: Person, root: Topic) -> tuple[list[Topic], bool]:
    """Every agent conversation rooted in ``root`` (closed ones too), page after page, up to
    MOST; and whether that was all of them."""
    found: list[Topic] = []
    before: str | None = None
    while len(found) < MOST:
        page = await rooted_in(
            tx, person, root, include_closed=True, limit=MAX_LIMIT, before=before
        )
        found += [view.topic for view in page.items]
        if page.next is None:
            return found[:MOST], len(found) <= MOST
        before = page.next
    return found[:MOST], False


def _inside(newest: Newest) -> Inside:
    messages = newest.messages
    return Inside(list(reversed(messages.items)), messages.next is not None, newest.runs.items)
