"""A2A's rows on both stores: clients by their token, exposures, a client's contexts (many per
agent, beside a person's one conversation), its tasks and no one else's, push configs, and the
tasks of A2A agents our texts started."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from a2a.types.a2a_pb2 import TaskState
from sqlalchemy import text

from parley.a2a.clients import add_client, expose, remove_client
from parley.a2a.contexts import Sent, send
from parley.a2a.model import Exposed, NewA2AClient, TaskFilter
from parley.a2a.tasks import now_of
from parley.clock import Clock
from parley.conversations.model import TopicKind
from parley.conversations.person import say
from parley.federation.model import OutboundText
from parley.people.model import Person
from parley.runs.model import RunState
from parley.store import Store, Tx
from parley.tokens import hash_token
from tests.support import Harness, eventually


async def test_clients_contexts_tasks_and_pushes(parley: Harness) -> None:
    await parley.hire("scribe")
    ctx, now = parley.context, parley.clock.now()
    async with ctx.store.transaction() as tx:
        owner, (mine, theirs), agent = await _let_in(tx, ctx.clock, "mine", "theirs")
    async with ctx.store.transaction() as tx:
        found, named = await tx.a2a.caller(hash_token(mine.token), "scribe")
        assert found is not None and found.name == "mine" and named == agent
        assert await tx.a2a.caller(hash_token(mine.token), "nobody") == (found, None)
        assert await tx.a2a.caller(hash_token("pac_unknown"), "scribe") == (None, None)
        assert await tx.a2a.exposed_by_name("scribe") == agent
        first = await send(tx, ctx.clock, mine.client, agent, "ctx-1", "one")
        second = await send(tx, ctx.clock, mine.client, agent, "ctx-2", "two")
        again = await send(tx, ctx.clock, mine.client, agent, "ctx-1", "three")
        other = await send(tx, ctx.clock, theirs.client, agent, "ctx-1", "four")
        # A person's own conversation with the agent is not one of the client's contexts.
        await say(tx, ctx.clock, owner, "scribe", "hello")
    assert first.topic.id == again.topic.id != second.topic.id != other.topic.id
    async with ctx.store.transaction() as tx:
        if ctx.store.dialect == "postgresql":  # each statement sees its own moment: hold them
            await tx.connection.execute(text("SELECT id FROM runs ORDER BY id FOR UPDATE"))
        every, in_one = TaskFilter(), TaskFilter(context="ctx-1")
        listed = await tx.a2a.tasks_of_client(mine.client.id, agent.agent_id, every, 0, 10)
        in_first = await tx.a2a.tasks_of_client(mine.client.id, agent.agent_id, in_one, 0, 10)
        paged = await tx.a2a.tasks_of_client(mine.client.id, agent.agent_id, every, 1, 10)
        counted = await tx.a2a.count_tasks_of_client(mine.client.id, agent.agent_id, every)
        queued = TaskFilter(run_states=("queued", "none"))
        finished = TaskFilter(run_states=("finished",))
        later = TaskFilter(updated_after=now + timedelta(hours=1))
        by_state = [
            await tx.a2a.count_tasks_of_client(mine.client.id, agent.agent_id, f)
            for f in (queued, finished, later)
        ]
        # The agent's turns may have started: the counts are those of the tasks' states, read in
        # the same transaction, with their runs held as they are.
        states = [(await now_of(tx, task)).state for task in listed]
        not_mine = await tx.a2a.task_of_client(
            mine.client.id, agent.agent_id, other.task.message_id
        )
        read = [
            await tx.a2a.task_of_client(mine.client.id, agent.agent_id, sent.task.message_id)
            for sent in (first, second, again)
        ]
        push = await tx.a2a.set_push(
            mine.client.id, first.task.message_id, "p1", now, url="https://x.example/h"
        )
        due = await tx.a2a.pushes_due()
    assert [t.body for t in listed] == ["three", "two", "one"]
    assert [t.body for t in in_first] == ["three", "one"]
    assert [t.body for t in paged] == ["two", "one"]
    submitted, completed = TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_COMPLETED
    assert counted == 3 and by_state == [states.count(submitted), states.count(completed), 0]
    assert not_mine is None
    assert read == [first.task, second.task, again.task]  # a task as sent, as the store reads it
    assert [(p.id, t.message_id) for p, t in due] == [(push.id, first.task.message_id)]
    async with ctx.store.transaction() as tx:
        await tx.a2a.push_done(push.id, now)
        assert await tx.a2a.pushes_due() == []
        assert await tx.a2a.delete_push(mine.client.id, first.task.message_id, "p1")
        await remove_client(tx, ctx.clock, owner, "mine")
        assert await tx.a2a.caller(hash_token(mine.token), "scribe") == (None, None)
        closed = await tx.topics.by_id(first.topic.id)
    assert closed is not None and closed.is_closed


async def test_tasks_of_a2a_agents_are_followed_and_cancelled(parley: Harness) -> None:
    await parley.hire("asker")
    ctx, now = parley.context, parley.clock.now()
    async with ctx.store.transaction() as tx:
        connection = await tx.connections.add(
            "sample", "http://a.example", hash_token("x"), "", now, None, kind="a2a", card="{}"
        )
        asker = await tx.agents.by_name("asker")
        assert asker is not None
        topic = await tx.topics.insert(TopicKind.TASK, asker.id, now, text="t")
        frame = OutboundText(
            connection="sample", thread_id="th", seq=1, message_id="m1", from_role="asker",
            to_role="echo", body="hi", topic_id=topic.id, sender_agent_id=asker.id,
        )  # fmt: skip
        later = now + timedelta(minutes=10)
        row = await tx.remote_tasks.started(connection.id, frame, "t-1", "WORKING", now, later)
        again = await tx.remote_tasks.started(connection.id, frame, "t-1", "WORKING", now, later)
        [followed] = await tx.remote_tasks.open()
        await tx.remote_tasks.moved(row, "TASK_STATE_INPUT_REQUIRED", 1)
        waiting = await tx.remote_tasks.waiting_for_us(connection.id, topic.id)
        cancelled = await tx.remote_tasks.cancel_in_topics([topic.id])
        [asked] = await tx.remote_tasks.open()
        await tx.remote_tasks.settled(row, "TASK_STATE_CANCELED", 1, now)
        left = await tx.remote_tasks.open()
    assert again == row and followed.frame == frame and followed.peer.kind == "a2a"
    assert waiting == "t-1" and cancelled == 1 and asked.cancel_asked
    assert left == []


async def test_two_first_texts_racing_for_one_context_share_its_conversation(
    parley: Harness,
) -> None:
    """The second insert of the context's conversation waits for the first (PostgreSQL's unique
    index; SQLite's one writer) and then does nothing, so that both texts join one topic."""
    await parley.hire("scribe")
    ctx = parley.context
    async with ctx.store.transaction() as tx:
        _, (mine,), agent = await _let_in(tx, ctx.clock, "mine")
    inside, release = asyncio.Event(), asyncio.Event()

    async def first() -> Sent:
        async with ctx.store.transaction() as tx:
            sent = await send(tx, ctx.clock, mine.client, agent, "raced", "one")
            inside.set()
            await release.wait()
        return sent

    async def second() -> Sent:
        await inside.wait()
        async with ctx.store.transaction() as tx:
            return await send(tx, ctx.clock, mine.client, agent, "raced", "two")

    racing = asyncio.gather(first(), second())
    await inside.wait()
    if ctx.store.dialect == "postgresql":
        assert await eventually(lambda: _waiting_for_a_lock(ctx.store)), "no race happened"
    release.set()
    one, two = await racing
    async with ctx.store.transaction() as tx:
        listed = await tx.a2a.tasks_of_client(mine.client.id, agent.agent_id, TaskFilter(), 0, 9)
    assert one.topic.id == two.topic.id
    assert sorted(task.body for task in listed) == ["one", "two"]
    assert {task.topic_id for task in listed} == {one.topic.id}


async def _waiting_for_a_lock(store: Store) -> bool:
    async with store.single_read() as tx:
        waiting = await tx.connection.execute(
            text("SELECT count(*) FROM pg_locks WHERE NOT granted")
        )
        return bool(waiting.scalar_one())


async def test_a_continued_task_follows_its_earliest_open_run_then_its_newest(
    parley: Harness,
) -> None:
    """A text linked to a task is no task of its own; the task follows the earliest of its
    texts' runs still open, and its next one once that ended, which the state filter reads as
    going on (``continued``), not as newly queued. All in one transaction: no turn starts."""
    await parley.hire("scribe")
    ctx, now = parley.context, parley.clock.now()
    async with ctx.store.transaction() as tx:
        _, (mine,), agent = await _let_in(tx, ctx.clock, "mine")
        first = await send(tx, ctx.clock, mine.client, agent, "ctx", "one")
        first_run = first.task.run_id
        assert first_run is not None and await tx.runs.start_many({first_run: "hash"}, now)
        more = await send(tx, ctx.clock, mine.client, agent, "ctx", "two")
        await tx.a2a.link_text(more.task.message_id, first.task.message_id)

        async def read() -> tuple[int | None, list[int]]:
            task_id = first.task.message_id
            task = await tx.a2a.task_of_client(mine.client.id, agent.agent_id, task_id)
            assert task is not None
            counts = [
                await tx.a2a.count_tasks_of_client(mine.client.id, agent.agent_id, given)
                for given in (
                    TaskFilter(),
                    TaskFilter(run_states=("queued", "none")),
                    TaskFilter(run_states=("running", "continued"), asking=False),
                )
            ]
            # The rule is written twice, in SQL (CURRENT_RUN) and in Python (Now.run): equal.
            followed = (await now_of(tx, task)).run
            assert followed is not None and followed.id == task.run_id
            return task.run_id, counts

        while_running = await read()
        await tx.runs.finish(first_run, RunState.FINISHED, now, output="reply one")
        once_ended = await read()
        texts = await tx.a2a.task_texts(first.task.message_id)
        follow_up = await tx.a2a.task_of_client(
            mine.client.id, agent.agent_id, more.task.message_id
        )
    assert more.task.run_id not in (None, first_run)
    assert while_running == (first_run, [1, 0, 1])
    assert once_ended == (more.task.run_id, [1, 0, 1])
    assert [(t.body, t.run_id) for t in texts] == [
        ("one", first_run),
        ("two", more.task.run_id),
    ]
    assert follow_up is None


async def _let_in(
    tx: Tx, clock: Clock, *clients: str
) -> tuple[Person, list[NewA2AClient], Exposed]:
    """The owner, the A2A clients it lets in under ``clients``, and scribe exposed."""
    owner = await tx.people.by_name("owner")
    assert owner is not None
    let_in = [await add_client(tx, clock, owner, name) for name in clients]
    return owner, let_in, await expose(tx, clock, owner, "scribe")
