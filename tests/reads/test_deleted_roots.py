"""Deleted roots: a deleted conversation or task, and everything rooted in it,
runs included, is readable by owners only."""

from __future__ import annotations

from typing import Any

from parley.conversations.agent_conversations import send_from_run
from parley.conversations.model import Role
from parley.conversations.person import delete_conversation, say
from parley.conversations.tasks import create_task
from parley.people.accounts import add_person
from parley.people.model import Role as PersonRole
from parley.runs.model import RunState
from parley.startup import hop_budget
from tests.reads.build import hire_idle_agents
from tests.runs.support import get
from tests.support import Harness, items


async def _in_root(parley: Harness, starter: str) -> dict[str, Any]:
    """A root (a task, or ``starter``'s conversation with w0) with a finished run that has input
    and output, and an agent conversation rooted in it with a run of its own."""
    await hire_idle_agents(parley)
    async with parley.context.store.transaction() as tx:
        person = await tx.people.by_name(starter)
        assert person is not None
        if starter == "owner":
            task, _ = await create_task(tx, parley.clock, person, "w0", "the secret plan")
            topic_id = task.id
        else:
            topic_id = (await say(tx, parley.clock, person, "w0", "the secret plan")).topic_id
        [run] = await tx.runs.open_in_topics([topic_id])
        topic = await tx.topics.by_id(topic_id)
        assert topic is not None
        budget = hop_budget(parley.context.settings)
        sender = Role(run.agent_id, "w0")
        sent = await send_from_run(tx, parley.clock, budget, run, sender, topic, "w1", "pass it on")
        await tx.runs.finish(run.id, RunState.FINISHED, parley.clock.now(), output="done: 42")
    return {"topic": topic_id, "run": run.id, "thread": sent.conversation.thread_id}


async def _person(parley: Harness, name: str, role: PersonRole) -> str:
    async with parley.context.store.transaction() as tx:
        return (await add_person(tx, parley.clock, name, role)).token


async def test_a_member_cannot_read_a_deleted_task_nor_its_runs(parley: Harness) -> None:
    made = await _in_root(parley, "owner")
    ada = parley.client(await _person(parley, "ada", PersonRole.MEMBER))
    task, run = made["topic"], made["run"]
    # Before the deletion a member reads the task, its run with input and output, and the rest.
    shown = await get(ada, f"/runs/{run}")
    assert (shown["run"]["output"], shown["input"][0]["body"]) == ("done: 42", "the secret plan")
    assert (await parley.owner.delete(f"/api/v1/tasks/{task}")).status_code == 204

    for path, absent in [
        (f"/tasks/{task}", f"no task {task}"),
        (f"/tasks/{task}/events", f"no task {task}"),
        (f"/topics/{task}", f"no topic {task}"),
        (f"/topics/{task}/messages", f"no topic {task}"),
        (f"/runs/{run}", f"no run {run}"),
        (f"/runs/{run}/events", f"no run {run}"),
        (f"/runs?topic={task}", f"no topic {task}"),
        (f"/agent-conversations/{made['thread']}", f"no agent conversation {made['thread']}"),
    ]:
        response = await ada.get(f"/api/v1{path}")
        assert (response.status_code, response.json()["message"]) == (404, absent), path
    assert (await ada.post(f"/api/v1/runs/{run}/stop")).status_code == 404
    for path in ("/runs", "/runs?agent=w0", "/runs?state=finished", "/tasks?deleted=true"):
        assert items(await get(ada, path)) == [], path
    assert items(await get(ada, "/agent-conversations?include_closed=true")) == []
    # Its owners still read all of it.
    assert (await get(parley.owner, f"/runs/{run}"))["run"]["output"] == "done: 42"
    assert [r["id"] for r in items(await get(parley.owner, f"/runs?topic={task}"))] == [run]


async def test_an_owner_reads_a_deleted_conversation_and_what_was_rooted_in_it(
    parley: Harness,
) -> None:
    ada_token = await _person(parley, "ada", PersonRole.MEMBER)
    ada = parley.client(ada_token)
    made = await _in_root(parley, "ada")
    conversation, run, thread = made["topic"], made["run"], made["thread"]
    # While it is open it is Ada's alone: the owner reads none of it.
    hidden = await parley.owner.get(f"/api/v1/conversations/{conversation}")
    assert (hidden.status_code, hidden.json()["message"]) == (
        404,
        f"no conversation {conversation}",
    )
    assert (await parley.owner.get(f"/api/v1/runs/{run}")).status_code == 404

    async with parley.context.store.transaction() as tx:
        person = await tx.people.by_name("ada")
        assert person is not None
        await delete_conversation(tx, parley.clock, person, "w0")

    shown = await get(parley.owner, f"/conversations/{conversation}")
    assert shown["topic"]["closed_reason"] == "conversation deleted by ada"
    assert [m["body"] for m in items(shown["messages"])] == ["the secret plan"]
    assert [r["id"] for r in items(shown["runs"])] == [run]
    assert [t["thread_id"] for t in items(shown["agent_conversations"])] == [thread]
    assert (await get(parley.owner, f"/runs/{run}"))["run"]["output"] == "done: 42"
    assert (await get(parley.owner, f"/agent-conversations/{thread}"))["topic"]["root_id"] == (
        conversation
    )
    deleted = items(await get(parley.owner, "/conversations?deleted=true"))
    assert [c["id"] for c in deleted] == [conversation]
    assert items(await get(parley.owner, "/conversations")) == []  # not among the open ones
    # Ada, a member, reads it no more: once deleted it is the owners'.
    for path in (
        f"/conversations/{conversation}",
        f"/runs/{run}",
        f"/agent-conversations/{thread}",
    ):
        assert (await ada.get(f"/api/v1{path}")).status_code == 404, path
    assert items(await get(ada, "/conversations?deleted=true")) == []


async def test_another_owner_reads_a_deleted_conversation_of_an_owner(parley: Harness) -> None:
    second = parley.client(await _person(parley, "bea", PersonRole.OWNER))
    made = await _in_root(parley, "bea")
    conversation = made["topic"]
    assert (await parley.owner.get(f"/api/v1/conversations/{conversation}")).status_code == 404
    assert (await second.delete("/api/v1/conversations/w0")).status_code == 204
    assert (await get(parley.owner, f"/conversations/{conversation}"))["topic"]["person"] == "bea"
    assert (await get(second, f"/conversations/{conversation}"))["topic"]["person"] == "bea"
