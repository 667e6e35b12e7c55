"""Reading topics: conversations, tasks, agent conversations and any topic by id, each as far as
the reader may (the store's one condition); what they may not read is absent, with the same
message as what does not exist."""

from __future__ import annotations

from parley.conversations.model import Message, TaskStatus, Topic, TopicKind
from parley.conversations.person import conversation_with
from parley.errors import NotFound
from parley.numbers import ascii_number
from parley.people.model import Person
from parley.reads import cursors
from parley.reads.model import Page, TopicView, Window
from parley.store import Tx


async def readable_topic(tx: Tx, reader: Person, topic_id: int) -> Topic:
    return await _readable(tx, reader, topic_id, None, f"no topic {topic_id}")


async def readable_task(tx: Tx, reader: Person, task_id: int) -> Topic:
    return await _readable(tx, reader, task_id, TopicKind.TASK, f"no task {task_id}")


async def readable_conversation(tx: Tx, reader: Person, ref: str) -> Topic:
    """By agent name, the reader's open conversation with that agent; by id, any conversation
    the reader may read (an owner reads deleted ones so)."""
    if ref.isascii() and ref.isdigit():  # agent names start with a letter
        number = ascii_number(ref)  # None: past any id, so no such conversation
        absent = f"no conversation {ref[:20]}{'…' if len(ref) > 20 else ''}"
        if number is None:
            raise NotFound(absent)
        return await _readable(tx, reader, number, TopicKind.CONVERSATION, absent)
    mine = await conversation_with(tx, reader, ref)
    message = f"you have no conversation with {ref}"
    return await _readable(tx, reader, mine.id, TopicKind.CONVERSATION, message)


async def readable_thread(tx: Tx, reader: Person, thread_id: str) -> Topic:
    """By thread ID; ``THREAD@CONNECTION`` names one of a peer's threads exactly."""
    thread_id, _, connection = thread_id.partition("@")
    topic = await tx.topics.readable_thread(reader, thread_id, connection or None)
    if topic is None:
        raise NotFound(f"no agent conversation {thread_id}")
    return topic


async def _readable(
    tx: Tx, reader: Person, topic_id: int, kind: TopicKind | None, absent: str
) -> Topic:
    topic = await tx.topics.readable(reader, topic_id, kind)
    if topic is None:
        raise NotFound(absent)
    return topic


async def conversations_page(
    tx: Tx,
    reader: Person,
    deleted: bool = False,
    limit: int | None = None,
    before: str | None = None,
) -> Page[TopicView]:
    """The reader's open conversations, newest first; with ``deleted``, the deleted ones they
    may read too (an owner's: every deleted conversation)."""
    window = cursors.window(cursors.CONVERSATIONS, limit, before)
    found = await tx.topics.readable_page(
        reader, window, TopicKind.CONVERSATION, include_closed=deleted
    )
    return await _views_page(tx, cursors.CONVERSATIONS, found.items, found.next_key)


async def tasks_page(
    tx: Tx,
    reader: Person,
    status: TaskStatus | None = None,
    deleted: bool = False,
    parent: int | None = None,
    limit: int | None = None,
    before: str | None = None,
) -> Page[TopicView]:
    """Tasks, newest first, optionally in one ``status``; deleted ones too with ``deleted`` (only
    owners read them); with ``parent``, the subtasks spawned in that topic."""
    window = cursors.window(cursors.TASKS, limit, before)
    if parent is not None:
        await readable_topic(tx, reader, parent)
    return await _tasks(tx, reader, window, status, deleted, parent)


async def subtasks_of(
    tx: Tx, reader: Person, topic: Topic, limit: int | None = None, before: str | None = None
) -> Page[TopicView]:
    """The subtasks spawned in ``topic``, deleted ones too, as ``tasks_page(parent=...)`` lists
    them; ``topic`` is one the reader may read (a single read's), so not checked again."""
    window = cursors.window(cursors.TASKS, limit, before)
    return await _tasks(tx, reader, window, None, True, topic.id)


async def _tasks(
    tx: Tx,
    reader: Person,
    window: Window,
    status: TaskStatus | None,
    deleted: bool,
    parent: int | None,
) -> Page[TopicView]:
    found = await tx.topics.readable_page(
        reader,
        window,
        TopicKind.TASK,
        include_closed=deleted,
        status=status.value if status else None,
        parent_id=parent,
    )
    return await _views_page(tx, cursors.TASKS, found.items, found.next_key)


async def agent_conversations_page(
    tx: Tx,
    reader: Person,
    include_closed: bool = False,
    root: int | None = None,
    pair: str | None = None,
    limit: int | None = None,
    before: str | None = None,
) -> Page[TopicView]:
    """Agent conversations the reader may read, newest first; closed ones too with
    ``include_closed``; with ``root``, those rooted in that topic; with ``pair``, those between
    two roles (``pair_key``)."""
    window = cursors.window(cursors.AGENT_CONVERSATIONS, limit, before)
    if root is not None:
        return await _rooted(
            tx, reader, await readable_topic(tx, reader, root), include_closed, window
        )
    found = await tx.topics.readable_page(
        reader, window, TopicKind.AGENT_CONVERSATION, include_closed=include_closed, pair=pair
    )
    return await _views_page(tx, cursors.AGENT_CONVERSATIONS, found.items, found.next_key)


async def rooted_in(
    tx: Tx,
    reader: Person,
    root: Topic,
    include_closed: bool = False,
    limit: int | None = None,
    before: str | None = None,
) -> Page[TopicView]:
    """The agent conversations rooted in ``root``, as ``agent_conversations_page(root=...)``
    lists them; ``root`` is one the reader may read (a single read's), so not checked again,
    and is each one's root (not read again)."""
    window = cursors.window(cursors.AGENT_CONVERSATIONS, limit, before)
    return await _rooted(tx, reader, root, include_closed, window)


async def _rooted(
    tx: Tx, reader: Person, root: Topic, include_closed: bool, window: Window
) -> Page[TopicView]:
    found = await tx.topics.readable_page(
        reader,
        window,
        TopicKind.AGENT_CONVERSATION,
        include_closed=include_closed,
        root_id=root.id,
    )
    views = [TopicView(topic, root) for topic in found.items]
    return Page(views, cursors.encode_next(cursors.AGENT_CONVERSATIONS, found.next_key))


async def messages_page(
    tx: Tx, reader: Person, topic_id: int, limit: int | None = None, before: str | None = None
) -> Page[Message]:
    """A topic's messages, newest first."""
    window = cursors.window(cursors.MESSAGES, limit, before)
    await readable_topic(tx, reader, topic_id)
    return cursors.page(cursors.MESSAGES, await tx.messages.page(topic_id, window))


async def messages_of(
    tx: Tx, topic: Topic, limit: int | None = None, before: str | None = None
) -> Page[Message]:
    """``topic``'s messages, newest first; ``topic`` is one the reader may read (a single
    read's), so not checked again."""
    window = cursors.window(cursors.MESSAGES, limit, before)
    return cursors.page(cursors.MESSAGES, await tx.messages.page(topic.id, window))


async def views(tx: Tx, topics: list[Topic]) -> list[TopicView]:
    """Each topic with its root, read in one query."""
    roots = await tx.topics.by_ids({topic.root_id for topic in topics} - {t.id for t in topics})
    roots.update({topic.id: topic for topic in topics})
    return [TopicView(topic, roots.get(topic.root_id)) for topic in topics]


async def _views_page(
    tx: Tx, listing: cursors.Listing, topics: list[Topic], next_key: int | str | None
) -> Page[TopicView]:
    return Page(await views(tx, topics), cursors.encode_next(listing, next_key))
