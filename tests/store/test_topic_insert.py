"""A topic inserted unless a concurrent transaction made it first comes back whole from its
insert, names and all, as a read of it gives it: one statement, no read after it."""

from __future__ import annotations

from functools import partial
from typing import Any

from sqlalchemy import event, text

from parley.conversations.model import LOCAL, TopicKind
from tests.support import Harness

MARKER = "SELECT 'this transaction'"


async def test_an_inserted_topic_comes_back_as_a_read_gives_it_in_one_statement(
    parley: Harness,
) -> None:
    await parley.hire("scribe")
    await parley.hire("critic")
    now = parley.clock.now()
    seen: list[tuple[Any, str]] = []
    engine = getattr(parley.context.store.engine, "sync_engine", parley.context.store.engine)

    def count(connection: Any, _cursor: Any, sql: str, *_: Any) -> None:
        seen.append((connection, sql))

    async with parley.context.store.transaction() as tx:
        scribe, critic = await tx.agents.by_name("scribe"), await tx.agents.by_name("critic")
        owner = await tx.people.by_name(parley.context.settings.owner_name)
        assert scribe is not None and critic is not None and owner is not None
        # The owner's conversation with scribe: made first, then raced by a second insert.
        with_scribe = partial(
            tx.topics.insert_unless_raced,
            TopicKind.CONVERSATION,
            scribe.id,
            now,
            addressed_agent_id=scribe.id,
            person_id=owner.id,
        )
        event.listen(engine, "before_cursor_execute", count)
        try:
            # This transaction's connection, told from the scheduler's on PostgreSQL's pool.
            await tx.connection.execute(text(MARKER))
            conversation = await with_scribe()
            assert conversation is not None
            exchange = await tx.topics.insert_unless_raced(
                TopicKind.AGENT_CONVERSATION,
                critic.id,
                now,
                connection=LOCAL,
                thread_id="thread-1",
                pair_key="critic|scribe",
                root_topic_id=conversation.id,
                sender_agent_id=scribe.id,
            )
            assert exchange is not None
            again = await with_scribe()
        finally:
            event.remove(engine, "before_cursor_execute", count)
        assert again is None  # the person's open conversation with scribe exists: nothing made
        [ours] = [connection for connection, sql in seen if sql == MARKER]
        statements = [sql for connection, sql in seen if connection is ours and sql != MARKER]
        assert len(statements) == 3, statements

        assert conversation == await tx.topics.by_id(conversation.id)
        assert exchange == await tx.topics.by_id(exchange.id)
    assert (conversation.agent_name, conversation.addressed_name) == ("scribe", "scribe")
    assert (conversation.person_name, conversation.sender_name) == (owner.name, None)
    assert (exchange.agent_name, exchange.sender_name, exchange.person_name) == (
        "critic",
        "scribe",
        None,
    )
    assert (
        exchange.kind is TopicKind.AGENT_CONVERSATION and exchange.root_topic_id == conversation.id
    )
