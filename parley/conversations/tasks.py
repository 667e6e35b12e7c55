"""Tasks: work given to an agent by a person, or by a run (a subtask, a topic of its own).
The person who gave one, and owners, may write more to it while it is open, cancel or delete it.
A task ends done, failed or cancelled; an ended task keeps its agent conversations working."""

from __future__ import annotations

from typing import Any

from parley.agents.selection import pick_for_held_topic, pick_for_new_topic
from parley.clock import Clock
from parley.conversations.hops import pass_hop
from parley.conversations.lifetime import close_root, stop_root
from parley.conversations.model import HopBudget, TaskStatus, Topic, TopicKind
from parley.deliveries.model import TaskCompletion, completion_key
from parley.errors import Conflict, Forbidden, NotFound
from parley.people.model import Person
from parley.runs.model import Run
from parley.runs.queueing import Queued, check_text, queue_text
from parley.store import Tx


async def create_task(
    tx: Tx, clock: Clock, person: Person, agent_name: str, text: str
) -> tuple[Topic, Queued]:
    """A person's task, and its text as queued for the run that takes it."""
    check_text(text, "task")
    return await _give(
        tx, clock, agent_name, text, {"person_id": person.id}, {"author_person_id": person.id}
    )


async def spawn_subtask(
    tx: Tx,
    clock: Clock,
    budget: HopBudget,
    run: Run,
    topic: Topic,
    agent_name: str,
    text: str,
    thread: bool,
) -> Topic:
    """A subtask from a run (working in ``topic``): its completion comes back to that run's
    session as new text. A topic of its own, whose work still counts for the run's origin."""
    check_text(text, "subtask")
    await pass_hop(tx, clock.now(), budget, topic)
    origin = {
        "spawned_by_run_id": run.id,
        "reply_agent_id": run.agent_id,
        "reply_topic_id": run.topic_id,
        "thread": thread,
        "origin_topic_id": topic.origin_id,
    }
    author = {"author_agent_id": run.agent_id, "from_run_id": run.id}
    task, _ = await _give(tx, clock, agent_name, text, origin, author)
    if thread:  # a thread may be made and bound to it, once this has committed (channels)
        tx.effects.threads_asked.append(task.id)
    return task


async def _give(
    tx: Tx,
    clock: Clock,
    agent_name: str,
    text: str,
    origin: dict[str, Any],
    author: dict[str, Any],
) -> tuple[Topic, Queued]:
    """A new task for ``agent_name`` (a template's goes to a clone), its text queued for it."""
    worker = await pick_for_new_topic(tx, clock, agent_name)
    addressed = await tx.agents.by_name(agent_name)
    task = await tx.topics.insert(
        TopicKind.TASK,
        worker.id,
        clock.now(),
        addressed_agent_id=addressed.id if addressed else worker.id,
        text=text,
        **origin,
    )
    return task, await queue_text(tx, clock.now(), task, worker, text, **author)


async def task_by_id(tx: Tx, task_id: int) -> Topic:
    """An open task, to act on (reading one: ``parley.reads.topics.readable_task``)."""
    task = await tx.topics.by_id(task_id)
    if task is None or task.kind is not TopicKind.TASK or task.is_closed:
        raise NotFound(f"no task {task_id}")
    return task


async def end_task(
    tx: Tx, clock: Clock, task: Topic, status: TaskStatus, result: str, by: Run | Person
) -> None:
    """done / failed by its agent's run, cancelled by a person. The first ending stands; a
    subtask's ending goes to the run that spawned it through the outbox, keyed by who ended it
    (see ``completion_key``)."""
    if not await tx.topics.set_status(task.id, status.value, result, clock.now()):
        current = await tx.topics.by_id(task.id)
        raise Conflict(f"task {task.id} already ended: {current.status if current else '?'}")
    tx.effects.ended_topics.append(task.id)
    if task.reply_agent_id is None or task.reply_topic_id is None:
        return
    run_id, person_id = (by.id, None) if isinstance(by, Run) else (None, by.id)
    key = completion_key(task.id, run_id, person_id)
    spawner = task.spawned_by_run_id
    completion = TaskCompletion(
        task_id=task.id,
        agent_id=task.reply_agent_id,
        topic_id=task.reply_topic_id,
        author_agent_id=task.agent_id,
        text=f"subtask {task.id} ({task.agent_name}) {status.value}: {result}",
        key=key,
        requester=None if spawner is None else await tx.messages.channel_ref_of_run(spawner),
    )
    if await tx.outbox.put(key, completion, clock.now()):
        tx.effects.outbox = True


async def say_in_task(tx: Tx, clock: Clock, person: Person, task_id: int, text: str) -> Queued:
    """Give ``text`` to the agent working on an open task, as a person would in a conversation:
    its next turn continues the task's session (told so if its last turn was stopped). A task
    the person may not read is absent; an ended one takes no more text (its result stands)."""
    check_text(text)
    task = await tx.topics.readable(person, task_id, TopicKind.TASK)
    if task is None:
        raise NotFound(f"no task {task_id}")
    _may_direct(task, person, "write to")
    if task.status != TaskStatus.OPEN.value or task.is_closed:
        ended = "deleted" if task.is_closed else task.status
        raise Conflict(f"task {task.id} is {ended}: it takes no more text; give a new task instead")
    worker = await pick_for_held_topic(tx, task.agent_name)
    return await queue_text(tx, clock.now(), task, worker, text, author_person_id=person.id)


def may_direct(task: Topic, person: Person) -> bool:
    """Whether ``person`` may write to, cancel or delete ``task``: its giver and owners."""
    return person.is_owner or task.person_id == person.id


def _may_direct(task: Topic, person: Person, verb: str) -> None:
    if not may_direct(task, person):
        raise Forbidden(f"only an owner or the person who gave task {task.id} may {verb} it")


async def cancel_task(tx: Tx, clock: Clock, task: Topic, person: Person) -> list[Run]:
    """End it as cancelled and stop everything working under it (see ``stop_root``)."""
    _may_direct(task, person, "cancel")
    await end_task(tx, clock, task, TaskStatus.CANCELLED, f"cancelled by {person.name}", person)
    return await stop_root(tx, clock.now(), task, f"task cancelled by {person.name}")


async def delete_task(tx: Tx, clock: Clock, task: Topic, person: Person) -> None:
    _may_direct(task, person, "delete")
    if task.status == TaskStatus.OPEN.value:
        await end_task(tx, clock, task, TaskStatus.CANCELLED, f"deleted by {person.name}", person)
    await close_root(tx, clock.now(), task, f"task deleted by {person.name}")
