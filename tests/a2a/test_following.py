"""A blocking send follows its new task's run from inside the transaction that queues its
text: the run's watch is subscribed to before that commit, so an end committed the moment
after (before the send reads anything) still ends the send, with the task's true state. On
both stores, through the handler's own ``Call``."""

from __future__ import annotations

import asyncio
import uuid

from a2a.helpers import new_text_part
from a2a.server.events.event_queue import Event
from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest, TaskState

from parley.a2a.calls import Call
from parley.a2a.clients import add_client, expose
from parley.conversations.lifetime import stop_root
from parley.store.a2a_tasks import TaskRow
from parley.store.effects import Effects
from tests.support import Harness

CONTEXT = "stopped-at-once"


async def test_a_run_ended_as_its_text_commits_still_ends_the_send(parley: Harness) -> None:
    # Nothing starts: the text's run still waits when the test stops it. With the scheduler on,
    # its pass could start the run, and the offline brain answer, while the stop's transaction
    # waited on PostgreSQL (CI saw the task COMPLETED once, under load).
    await parley.context.runtime.scheduler.stop()
    await parley.hire("scribe")
    ctx = parley.context
    async with ctx.store.transaction() as tx:
        owner = await tx.people.by_name("owner")
        assert owner is not None
        client = (await add_client(tx, ctx.clock, owner, "planner")).client
        agent = await expose(tx, ctx.clock, owner, "scribe")
    stopped: list[int] = []

    async def stop_at_once(effects: Effects) -> None:
        """After each commit (the send's is the first with its context), before the send goes
        on: its conversation stopped, its queued run with it."""
        if stopped:
            return
        async with ctx.store.transaction() as tx:
            topic = await tx.topics.a2a_context(client.id, agent.agent_id, CONTEXT)
            if topic is None:
                return
            stopped.append(topic.id)
            await stop_root(tx, ctx.clock.now(), topic, "stopped by the test at once")

    unsubscribe = ctx.store.subscribe(stop_at_once)
    message = Message(
        role=Role.ROLE_USER,
        message_id=uuid.uuid4().hex,
        context_id=CONTEXT,
        parts=[new_text_part("hello")],
    )
    call = Call(ctx, client, agent)

    async def followed() -> tuple[TaskRow, list[Event]]:
        async with call.sending(SendMessageRequest(message=message)) as task:
            return task, [event async for event in call.events(task)]

    try:  # an end missed would hang here
        task, events = await asyncio.wait_for(followed(), timeout=30)
    finally:
        unsubscribe()
    assert stopped, "the send's commit was not seen"
    assert call.ended is not None and events
    assert call.ended.state == TaskState.TASK_STATE_CANCELED
    assert call.ended.run is not None and call.ended.run.id == task.run_id
