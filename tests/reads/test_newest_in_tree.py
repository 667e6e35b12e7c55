"""A root's tree reads its conversations' messages and runs in one batch on the strength of the
root's single check; a topic rooted elsewhere in the batch is refused, not read."""

from __future__ import annotations

import pytest

from parley.conversations.model import TopicKind
from parley.reads.details import newest_in_tree
from tests.support import Harness


async def test_a_topic_rooted_elsewhere_is_refused(parley: Harness) -> None:
    await parley.hire("scribe")
    now = parley.clock.now()
    async with parley.context.store.transaction() as tx:
        agent = await tx.agents.by_name("scribe")
        assert agent is not None
        root = await tx.topics.insert(TopicKind.TASK, agent.id, now, text="root")
        other = await tx.topics.insert(TopicKind.TASK, agent.id, now, text="other")
        await tx.messages.add(root.id, "text", "hello", now)
        found = await newest_in_tree(tx, root, [root], 5)  # the root is rooted in itself
        with pytest.raises(ValueError):
            await newest_in_tree(tx, root, [root, other], 5)
    assert [m.body for m in found[root.id].messages.items] == ["hello"]
    assert found[root.id].messages.next is None and found[root.id].runs.items == []
