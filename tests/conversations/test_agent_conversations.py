"""Agent conversations per topic, for connection ``local``, through the API: each rule has a
test named ``test_rule_N_…`` after it (docs/architecture.md names the main ones)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest

from parley.errors import Conflict
from parley.runs.queueing import queue_text
from tests.runs.support import follow, get, say, say_and_wait, script
from tests.support import Harness, eventually, items, oldest_first

RELAY = {
    "a": """
        rules:
          - when: {from: b}
            do: [{report: "{text}"}]
        otherwise:
          - send: {to: b, text: "q: {text}"}
    """,
    "b": """
        rules:
          - when: {from: a}
            do: [{send: {to: c, text: "{text}"}}]
          - when: {from: c}
            do: [{send: {to: a, text: "{text}"}}]
    """,
    "c": """
        rules:
          - when: {from: b}
            do: [{reply: "answer to {text}"}]
    """,
}


async def _hire_relay(parley: Harness, tmp_path: Path) -> None:
    for name, rules in RELAY.items():
        await parley.hire(name, brain=script(tmp_path, name, rules), max_sessions=4)


async def _reports(parley: Harness, agent: str, client: Any = None) -> list[str]:
    shown = await get(client or parley.owner, f"/conversations/{agent}")
    return [m["body"] for m in oldest_first(shown["messages"]) if m["kind"] == "report"]


async def _agent_conversations(client: Any, closed: bool = False) -> list[dict[str, Any]]:
    return items(await get(client, f"/agent-conversations?include_closed={str(closed).lower()}"))


async def test_rule_1_the_root_follows_from_the_sending_run(
    parley: Harness, tmp_path: Path
) -> None:
    await _hire_relay(parley, tmp_path)
    await say(parley.owner, "a", "hi")
    assert await eventually(lambda: _has_reports(parley, "a", 1))
    conversation = await get(parley.owner, "/conversations/a")
    threads = await _agent_conversations(parley.owner)
    # a→b (in a's run on the person's conversation) and b→c (in b's run in that agent
    # conversation) both answer for the person's conversation.
    assert {t["root_id"] for t in threads} == {conversation["topic"]["id"]}
    assert {(t["sender"], t["agent"]) for t in threads} == {("a", "b"), ("b", "c")}


async def _has_reports(parley: Harness, agent: str, count: int) -> bool:
    return len(await _reports(parley, agent)) >= count


async def test_rule_2_a_relay_brings_the_answer_back_down_the_chain(
    parley: Harness, tmp_path: Path
) -> None:
    await _hire_relay(parley, tmp_path)
    await say(parley.owner, "a", "what time is it")
    assert await eventually(lambda: _has_reports(parley, "a", 1))
    assert await _reports(parley, "a") == ["answer to q: what time is it"]
    # The reply came back in the same conversations: still exactly two, each with a random ID.
    threads = await _agent_conversations(parley.owner)
    assert len(threads) == 2
    assert all(len(t["thread_id"]) == 32 for t in threads)
    assert threads[0]["thread_id"] != threads[1]["thread_id"]
    a_and_b = next(t for t in threads if {t["sender"], t["agent"]} == {"a", "b"})
    between_a_and_b = await get(parley.owner, f"/agent-conversations/{a_and_b['thread_id']}")
    assert [(m["author"], m["recipient"]) for m in oldest_first(between_a_and_b["messages"])] == [
        ("a", "b"),
        ("b", "a"),
    ]


async def test_rule_2_each_root_has_its_own_conversation_with_a_new_thread_id(
    parley: Harness, tmp_path: Path
) -> None:
    await _hire_relay(parley, tmp_path)
    ada = await parley.add_person("ada")
    await say(parley.owner, "a", "one")
    await say(parley.client(ada), "a", "two")
    assert await eventually(lambda: _has_reports(parley, "a", 1))
    assert await eventually(lambda: _reports_of(parley, ada, "a", ["answer to q: two"]))
    owners = await _agent_conversations(parley.owner)
    adas = await _agent_conversations(parley.client(ada))
    # Two people's conversations with a: two roots, so a↔b twice and b↔c twice.
    assert len(owners) == len(adas) == 2
    assert len({t["thread_id"] for t in owners + adas}) == 4


async def test_rule_3_a_request_without_a_run_token_is_refused(parley: Harness) -> None:
    await parley.hire("a")
    anonymous = await parley.client().post("/api/v1/act/send", json={"to": "a", "text": "x"})
    assert anonymous.status_code == 401
    assert "a role token without a run has no topic" in anonymous.json()["message"]
    # A person's token is not a run token either.
    as_person = await parley.owner.post("/api/v1/act/send", json={"to": "a", "text": "x"})
    assert as_person.status_code == 401
    assert "a role token without a run has no topic" in as_person.json()["message"]


async def test_rule_4_a_known_thread_continues(parley: Harness, tmp_path: Path) -> None:
    """Locally every thread is known: the next send under the same root continues it. An
    unknown thread, and one whose roles do not match, come only from a peer: the receiver's
    tests (tests/federation/test_receiver.py) send those through the frames route."""
    await _hire_relay(parley, tmp_path)
    await say(parley.owner, "a", "hi")
    assert await eventually(lambda: _has_reports(parley, "a", 1))
    before = {t["thread_id"]: t for t in await _agent_conversations(parley.owner)}
    await say(parley.owner, "a", "more")
    assert await eventually(lambda: _has_reports(parley, "a", 2))
    after = {t["thread_id"]: t for t in await _agent_conversations(parley.owner)}
    assert after.keys() == before.keys()
    thread = next(t for t in after.values() if t["sender"] == "a")
    shown = await get(parley.owner, f"/agent-conversations/{thread['thread_id']}")
    assert len(items(shown["messages"])) == 4  # two questions, two answers


async def test_rule_5_ordering_is_per_agent_conversation(parley: Harness, tmp_path: Path) -> None:
    """Text waiting in one agent conversation holds up only that conversation."""
    slow = script(
        tmp_path,
        "b",
        """
        rules:
          - when: {text: "slow"}
            do: [{sleep: 30}]
          - when: {from: a}
            do: [{reply: "got {text}"}]
        """,
    )
    relay = script(
        tmp_path,
        "a",
        """
        rules:
          - when: {from: b}
            do: [{report: "{text}"}]
          - when: {}
            do: [{send: {to: b, text: "{text}"}}]
        """,
    )
    await parley.hire("a", brain=relay, max_sessions=4)
    await parley.hire("b", brain=slow, max_sessions=4)
    ada = await parley.add_person("ada")
    await say(parley.owner, "a", "slow")
    await say(parley.owner, "a", "queued behind slow")
    await say(parley.client(ada), "a", "fast")
    assert await eventually(lambda: _reports_of(parley, ada, "a", ["got fast"]))
    # The owner's conversation with b still holds its slow turn (and the text behind it, which
    # may have joined that turn or wait for the next): nothing of it has finished.
    owners = {r["state"] for r in items(await get(parley.owner, "/runs?agent=b"))}
    assert "running" in owners
    assert owners <= {"running", "queued"}
    adas = items(await get(parley.client(ada), "/runs?agent=b"))
    assert [r["state"] for r in adas] == ["finished"]


async def _reports_of(parley: Harness, token: str, agent: str, expected: list[str]) -> bool:
    return await _reports(parley, agent, parley.client(token)) == expected


async def test_rule_6_visibility_follows_the_root(parley: Harness, tmp_path: Path) -> None:
    await _hire_relay(parley, tmp_path)
    ada = await parley.add_person("ada")
    bob = parley.client(await parley.add_person("bob"))
    await say(parley.client(ada), "a", "private question")
    assert await eventually(
        lambda: _reports_of(parley, ada, "a", ["answer to q: private question"])
    )
    mine = await _agent_conversations(parley.client(ada))
    assert len(mine) == 2
    # Another person, owner included, sees none of it and cannot tell it exists.
    for other in (bob, parley.owner):
        assert await _agent_conversations(other) == []
        for thread in mine:
            response = await other.get(f"/api/v1/agent-conversations/{thread['thread_id']}")
            assert response.status_code == 404
            assert response.json()["message"] == f"no agent conversation {thread['thread_id']}"
        runs = items(await get(parley.client(ada), "/runs"))
        hidden = await other.get(f"/api/v1/runs/{runs[0]['id']}")
        assert hidden.status_code == 404
    # A task is every person's; conversations rooted in it too.
    task = (await bob.post("/api/v1/tasks", json={"agent": "a", "text": "shared"})).json()
    assert await eventually(lambda: _task_reports(parley, task["id"], 1))
    assert len(await _agent_conversations(parley.client(ada))) == 4
    # Once the person's conversation is gone, owners read what was rooted in it; others don't.
    assert (await parley.client(ada).delete("/api/v1/conversations/a")).status_code == 204
    closed = await _agent_conversations(parley.owner, closed=True)
    assert {t["thread_id"] for t in mine} <= {t["thread_id"] for t in closed}
    assert len(await _agent_conversations(bob, closed=True)) == 2  # only the task's


async def _task_reports(parley: Harness, task_id: int, count: int) -> bool:
    shown = await get(parley.owner, f"/tasks/{task_id}")
    return len([m for m in items(shown["messages"]) if m["kind"] == "report"]) >= count


async def test_rule_7_a_finished_task_keeps_its_agent_conversations_working(
    parley: Harness, tmp_path: Path
) -> None:
    finisher = script(
        tmp_path,
        "a",
        """
        rules:
          - when: {from: owner}
            do:
              - send: {to: b, text: "{text}"}
              - complete: "asked b"
          - when: {from: b}
            do: [{report: "late answer: {text}"}]
        """,
    )
    await parley.hire("a", brain=finisher)
    await parley.hire("b", brain=script(tmp_path, "b", "otherwise: [{reply: 'answer to {text}'}]"))
    task = (await parley.owner.post("/api/v1/tasks", json={"agent": "a", "text": "go"})).json()
    assert await eventually(lambda: _task_reports(parley, task["id"], 1))
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    assert shown["topic"]["status"] == "done"
    assert [m["body"] for m in items(shown["messages"]) if m["kind"] == "report"] == [
        "late answer: answer to go"
    ]


async def test_rule_7_deleting_a_root_closes_its_agent_conversations(
    parley: Harness, tmp_path: Path
) -> None:
    await _hire_relay(parley, tmp_path)
    await say(parley.owner, "a", "first")
    assert await eventually(lambda: _has_reports(parley, "a", 1))
    before = await _agent_conversations(parley.owner)
    assert (await parley.owner.delete("/api/v1/conversations/a")).status_code == 204
    assert await _agent_conversations(parley.owner) == []
    closed = await _agent_conversations(parley.owner, closed=True)
    assert all(t["closed_reason"] == "conversation deleted by owner" for t in closed)
    # History stays; later text in a closed one is refused with reason 'thread'.
    kept = await get(parley.owner, f"/agent-conversations/{before[0]['thread_id']}")
    assert len(items(kept["messages"])) == 2
    with pytest.raises(Conflict) as refused:
        async with parley.context.store.transaction() as tx:
            conversation = await tx.topics.by_thread("local", before[0]["thread_id"])
            recipient = await tx.agents.by_name("b")
            assert conversation is not None and recipient is not None
            await queue_text(tx, parley.clock.now(), conversation, recipient, "late")
    assert refused.value.fields["reason"] == "thread"
    # The next send from a new root opens new conversations with new thread IDs.
    await say(parley.owner, "a", "second")
    assert await eventually(lambda: _has_reports(parley, "a", 1))
    after = await _agent_conversations(parley.owner)
    assert len(after) == 2
    assert not {t["thread_id"] for t in after} & {t["thread_id"] for t in before}


async def test_rule_7_a_draining_or_retired_recipient_refuses_a_new_conversation(
    parley: Harness, tmp_path: Path
) -> None:
    await _hire_relay(parley, tmp_path)
    await parley.owner.post("/api/v1/agents/b/retire", json={"reason": "moving on"})
    end = await say_and_wait(parley, "a", "hello")
    assert end["state"] == "failed"
    assert "agent b is retired (moving on) and takes no new work" in end["reason"]


async def test_rule_10_a_run_in_an_agent_conversation_is_told_its_root(
    parley: Harness, tmp_path: Path
) -> None:
    teller = script(
        tmp_path,
        "b",
        """
        rules:
          - when: {from: a}
            do: [{report: "b works for: {root}"}]
        """,
    )
    await parley.hire("a", brain=script(tmp_path, "a", "otherwise: [{send: {to: b, text: x}}]"))
    await parley.hire("b", brain=teller)
    task = (await parley.owner.post("/api/v1/tasks", json={"agent": "a", "text": "t"})).json()
    await say(parley.owner, "a", "c")
    assert await eventually(lambda: _task_reports(parley, task["id"], 1))
    assert await eventually(lambda: _has_reports(parley, "a", 1))
    shown = await get(parley.owner, f"/tasks/{task['id']}")
    report = next(m for m in items(shown["messages"]) if m["kind"] == "report")
    assert report["author"] == "b"
    assert report["body"] == f"b works for: task {task['id']} (t); use report(text) to post there"
    assert await _reports(parley, "a") == [
        "b works for: owner's conversation with a; use report(text) to post there"
    ]


async def test_rule_11_a_role_busy_in_many_topics_has_a_conversation_and_a_run_for_each(
    parley: Harness, tmp_path: Path
) -> None:
    await _hire_relay(parley, tmp_path)
    tasks = [
        (await parley.owner.post("/api/v1/tasks", json={"agent": "a", "text": f"t{i}"})).json()
        for i in range(3)
    ]
    for task in tasks:
        assert await eventually(partial(_task_reports, parley, task["id"], 1))
    threads = await _agent_conversations(parley.owner)
    a_and_b = [t for t in threads if {t["sender"], t["agent"]} == {"a", "b"}]
    assert sorted(t["root_id"] for t in a_and_b) == sorted(t["id"] for t in tasks)
    for thread in a_and_b:
        shown = await get(parley.owner, f"/agent-conversations/{thread['thread_id']}")
        assert len(items(shown["runs"])) >= 1
        assert all(run["topic_id"] == thread["id"] for run in items(shown["runs"]))


async def test_rule_12_agent_history_lists_everything_between_two_roles(
    parley: Harness, tmp_path: Path
) -> None:
    await _hire_relay(parley, tmp_path)
    ada = await parley.add_person("ada")
    await say(parley.owner, "a", "one")
    await say(parley.client(ada), "a", "two")
    assert await eventually(lambda: _has_reports(parley, "a", 1))
    assert await eventually(lambda: _reports_of(parley, ada, "a", ["answer to q: two"]))
    history = items(await get(parley.owner, "/agents/b/history/c"))
    assert len(history) == 1  # the owner reads only what is rooted in their own conversation
    assert [m["body"] for m in oldest_first(history[0]["messages"])] == [
        "q: one",
        "answer to q: one",
    ]
    assert len(items(await get(parley.client(ada), "/agents/c/history/b"))) == 1
    missing = await parley.owner.get("/api/v1/agents/b/history/ghost")
    assert missing.status_code == 404


async def test_a_turn_follows_its_run_events(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("c", brain=script(tmp_path, "c", "otherwise: [{reply: one}, {reply: two}]"))
    queued = await say(parley.owner, "c", "hi")
    chunks, end = await follow(parley.owner, queued["run_id"])
    assert end["state"] == "finished"
    assert end["output"] == "one\ntwo"
    assert "".join(chunks) in ("one\ntwo", "")  # missed if the run ended before we watched


async def test_rule_7_no_text_joins_a_closed_topic_and_no_run_starts_in_one(
    parley: Harness, tmp_path: Path
) -> None:
    """What a deletion racing a send could leave (seen on PostgreSQL under load): text for a
    closed topic is refused with reason 'thread', and a run queued in one never starts."""
    from parley.agents.lookup import agent_by_name
    from parley.conversations.lifetime import close_root

    await parley.hire("b", brain=script(tmp_path, "b", "otherwise: [{sleep: 30}]"))
    queued = await say(parley.owner, "b", "first")
    async with parley.context.store.transaction() as tx:
        topic = await tx.topics.by_id(queued["topic_id"])
        assert topic is not None
        agent = await agent_by_name(tx, "b")
        late_run = await tx.runs.enqueue(
            agent.id,
            topic.id,
            (await tx.runs.session(agent.id, topic.id, parley.clock.now())).id,
            parley.clock.now(),
        )
        await close_root(tx, parley.clock.now(), topic, "deleted")
    async with parley.context.store.transaction() as tx:
        closed = await tx.topics.by_id(queued["topic_id"])
        assert closed is not None
        with pytest.raises(Conflict) as refused:
            await queue_text(tx, parley.clock.now(), closed, agent, "too late")
        assert refused.value.fields["reason"] == "thread"
        startable = await tx.runs.startable(100)
    assert late_run not in [run.id for run in startable]
