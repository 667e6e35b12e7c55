"""What happens to everything working for a root when a person stops or deletes it.

Stopping a root (a person's conversation, a task) stops every run working under it, at any
depth: in it, in the agent conversations rooted in it, and in the subtasks its runs spawned,
theirs in turn. A subtask is a topic of its own, but its work was set off for this root: left
running, a runaway loop inside it would go on after the person said stop, and its result would
wake the stopped root's agent again. The subtasks stay open (only their runs stop); their
waiting text counts as handled, as a stopped turn's text does.

Every stop takes the lock of the roots it stops under, as a run does before it acts under its
root (conversations/hops.py): what a run set off has committed before the runs to stop are read,
and a run stopped first acts no more.

Deleting a root closes it and its agent conversations: their runs stop, history is kept, later
text is refused with reason 'thread', and the peer of each one with a peer is told (``close``).
Its subtasks go on; their results are refused, with why.
"""

from __future__ import annotations

from datetime import datetime

from parley.channels.model import SESSION_DELETED, session_key
from parley.conversations.model import Topic
from parley.conversations.peer_closing import tell_peers_closed
from parley.runs.model import Run
from parley.runs.stop import stop_runs, stop_topics
from parley.store import Tx


async def stop_root(tx: Tx, now: datetime, root: Topic, reason: str) -> list[Run]:
    """Stop every open run under ``root``, at any depth; returns the runs this stopped."""
    return await stop_topics(tx, await _lock_tree(tx, root.id), now, reason)


async def stop_topic(tx: Tx, now: datetime, topic: Topic, reason: str) -> list[Run]:
    """Stop the open runs of one topic (an agent conversation) alone."""
    await tx.topics.lock([topic.root_id])  # as a run acting under that root does
    return await stop_topics(tx, [topic.id], now, reason)


async def stop_run(tx: Tx, now: datetime, run: Run, reason: str) -> list[Run]:
    """Stop one run (if still open)."""
    await tx.topics.lock_root_of(run.topic_id)
    return await stop_runs(tx, [run], now, reason)


async def close_root(
    tx: Tx, now: datetime, root: Topic, reason: str, closed_by_peer: bool = False
) -> list[Run]:
    """Close the root and its agent conversations and stop their runs; the peers of those
    with a peer are told (the root's own, if its peer closed it, is not told back). Its
    subtasks, topics of their own, go on: their results are then refused with the reason."""
    # The root's row first, as a send from a run under it does: one lock order, no deadlock.
    await tx.topics.closed_reason_locked(root.id)
    rooted = [topic for topic in await tx.topics.rooted_in(root.id) if not topic.is_closed]
    closing = [root.id, *(topic.id for topic in rooted)]
    await tx.topics.close(closing, reason, now)
    others = [topic for topic in rooted if topic.id != root.id]  # a peer's root is its own
    await tell_peers_closed(tx, now, others if closed_by_peer else [root, *others])
    # Their sessions are gone: so are the channel bindings to them, in this same transaction.
    await tx.bindings.end(now, SESSION_DELETED, sessions=[session_key(t) for t in closing])
    tx.effects.ended_topics.extend(closing)
    return await stop_topics(tx, closing, now, reason)


async def _lock_tree(tx: Tx, root_id: int) -> list[int]:
    """Every topic working for ``root_id``, with the roots among them (it and its subtasks, at
    any depth) locked in id order, as a run's send, spawn or node question locks its root. So
    what a run set off under one of them has committed before the runs to stop are read, and a
    run that has not yet is refused (it is stopped by then). Read again once locked: a subtask
    spawned meanwhile is locked and stopped too."""
    locked: set[int] = set()
    while True:
        roots, tree = await _tree(tx, root_id)
        if roots <= locked:
            return tree
        await tx.topics.lock(roots - locked)
        locked |= roots


async def _tree(tx: Tx, root_id: int) -> tuple[set[int], list[int]]:
    """The roots under ``root_id`` (itself and its subtasks at any depth) and every topic under
    them (those roots and their agent conversations)."""
    roots, tree, frontier = {root_id}, [root_id], [root_id]
    while frontier:
        working = [*frontier, *await tx.topics.rooted_in_any(frontier)]
        tree.extend(working[len(frontier) :])
        frontier = [t for t in await tx.topics.subtask_ids(working) if t not in roots]
        roots.update(frontier)
        tree.extend(frontier)
    return roots, tree
