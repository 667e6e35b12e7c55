"""Runs and sessions: one run at a time per session, text arriving meanwhile joins the next
run, at most max_sessions running per agent in arrival order, node sessions one thing at a time,
surge clones for templates."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

from parley.clock import SystemClock
from parley.node.messages import TurnStart, turn_subject
from parley.node.runner import NodeRunner
from parley.settings import Settings
from tests.runs.support import follow, get, say, script
from tests.support import Harness, eventually, items, oldest_first, started

ECHO = "otherwise: [{reply: 'got {text}'}]"


async def _states(parley: Harness, agent: str) -> list[str]:
    return sorted(run["state"] for run in items(await get(parley.owner, f"/runs?agent={agent}")))


async def test_text_arriving_while_busy_is_given_to_the_next_run_together(
    parley: Harness, tmp_path: Path
) -> None:
    gate = tmp_path / "first may end"
    rules = f"""
        rules:
          - when: {{text: "^first$"}}
            do: [{{wait_for: "{gate}"}}, {{reply: "done first"}}]
        otherwise: [{{reply: "got {{text}}"}}]
    """
    await parley.hire("busy", brain=script(tmp_path, "busy", rules))
    first = await say(parley.owner, "busy", "first")
    assert await eventually(lambda: _running(parley, first["run_id"]))
    second = await say(parley.owner, "busy", "second")
    third = await say(parley.owner, "busy", "third")
    assert second["run_id"] == third["run_id"] != first["run_id"]
    gate.touch()
    _, end = await follow(parley.owner, third["run_id"])
    assert end["output"] == "got second\ngot third"
    shown = await get(parley.owner, f"/runs/{third['run_id']}")
    assert [m["body"] for m in shown["input"]] == ["second", "third"]


async def _running(parley: Harness, run_id: int) -> bool:
    return bool((await get(parley.owner, f"/runs/{run_id}"))["run"]["state"] == "running")


async def test_an_agent_runs_at_most_max_sessions_and_the_rest_waits_in_order(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire(
        "pair", brain=script(tmp_path, "pair", "otherwise: [{sleep: 30}]"), max_sessions=2
    )
    tasks = []
    for n in range(4):
        created = await parley.owner.post("/api/v1/tasks", json={"agent": "pair", "text": f"t{n}"})
        tasks.append(created.json()["id"])
    assert await eventually(
        lambda: _has_states(parley, "pair", ["queued", "queued", "running", "running"])
    )
    runs = oldest_first(await get(parley.owner, "/runs?agent=pair"))
    assert [r["state"] for r in runs] == ["running", "running", "queued", "queued"]
    # When one ends, the oldest waiting one starts.
    await parley.owner.post(f"/api/v1/runs/{runs[0]['id']}/stop")
    assert await eventually(lambda: _running(parley, runs[2]["id"]))
    assert (await get(parley.owner, f"/runs/{runs[3]['id']}"))["run"]["state"] == "queued"


async def _has_states(parley: Harness, agent: str, states: list[str]) -> bool:
    return await _states(parley, agent) == states


async def test_a_node_session_answers_one_caller_at_a_time_and_remembers_who_asked(
    parley: Harness,
) -> None:
    ada = parley.client(await parley.add_person("ada"))
    asked = [
        (await client.post("/api/v1/nodes/local/ask", json={"text": question})).json()
        for client, question in ((parley.owner, "disk space?"), (ada, "uptime?"))
    ]
    assert asked[0]["run_id"] != asked[1]["run_id"]  # one turn per caller, never merged
    for queued in asked:
        _, end = await follow(parley.owner, queued["run_id"])
        assert end["state"] == "finished"
    exchanges = await get(parley.owner, "/nodes/local/exchanges")
    said = [(m["author"], m["kind"], m["body"]) for m in oldest_first(exchanges)]
    questions = [s for s in said if s[1] == "text"]
    assert questions == [("owner", "text", "disk space?"), ("ada", "text", "uptime?")]
    answers = [s for s in said if s[1] == "reply"]
    assert "I heard: disk space?" in answers[0][2] and "I heard: uptime?" in answers[1][2]
    runs = oldest_first(await get(parley.owner, "/runs?agent=node:local"))
    assert all(r["agent"] == "node:local" for r in runs)
    intervals = [(r["started_at"], r["finished_at"]) for r in runs]
    assert intervals[0][1] <= intervals[1][0]  # the second waited for the first


async def test_a_node_session_remembers_every_exchange_in_its_next_turn(
    parley: Harness,
) -> None:
    first = (await parley.owner.post("/api/v1/nodes/local/ask", json={"text": "one"})).json()
    await follow(parley.owner, first["run_id"])
    second = (await parley.owner.post("/api/v1/nodes/local/ask", json={"text": "two"})).json()
    await follow(parley.owner, second["run_id"])
    async with parley.context.store.transaction() as tx:
        run = await tx.runs.by_id(second["run_id"])
        agent = await tx.agents.by_name("node:local")
        assert run is not None and agent is not None
        from parley.hub.turns import Starting, build_turns

        [turn] = await build_turns(tx, [Starting(run, agent, "prt_x")], "http://x")
    assert [(s.author, s.text) for s in turn.history][:2] == [
        ("owner", "one"),
        ("node:local", turn.history[1].text),
    ]
    assert turn.tools == ["send", "remember", "ask_node", "read", "list", "find"]


async def test_a_template_s_work_goes_to_clones_and_surges(parley: Harness, tmp_path: Path) -> None:
    brain = script(tmp_path, "pool", "otherwise: [{sleep: 30}]")
    await parley.hire("pool", brain=brain, template=True, clone_lifetime="1h", surge_threshold=2)
    for n in range(4):
        created = await parley.owner.post("/api/v1/tasks", json={"agent": "pool", "text": f"t{n}"})
        assert created.status_code == 201, created.text
    agents = {a["name"]: a for a in items(await get(parley.owner, "/agents"))}
    clones = sorted(name for name, a in agents.items() if a["clone_of"] == "pool")
    # The first task hired pool-1; its queue reached the threshold of 2, so pool-2 was hired.
    assert clones == ["pool-1", "pool-2"]
    tasks = items(await get(parley.owner, "/tasks"))
    assert {t["addressed"] for t in tasks} == {"pool"}
    assert sorted(t["agent"] for t in tasks) == ["pool-1", "pool-1", "pool-2", "pool-2"]
    assert await eventually(lambda: _clone_active(parley, "pool-2"))
    assert await eventually(lambda: _has_states(parley, "pool-2", ["queued", "running"]))
    assert await _states(parley, "pool") == []  # a template never runs


async def _clone_active(parley: Harness, name: str) -> bool:
    return bool((await parley.agent(name))["lifecycle"] == "active")


async def test_a_draining_agent_finishes_its_topics_then_retires(
    parley: Harness, tmp_path: Path
) -> None:
    gate = tmp_path / "long may end"
    rules = f"""
        rules:
          - when: {{text: "^long$"}}
            do: [{{wait_for: "{gate}"}}, {{reply: "long done"}}]
        otherwise: [{{reply: "got {{text}}"}}]
    """
    await parley.hire("leaver", brain=script(tmp_path, "leaver", rules))
    first = await say(parley.owner, "leaver", "long")
    assert await eventually(lambda: _running(parley, first["run_id"]))
    await parley.owner.post("/api/v1/agents/leaver/retire", json={"reason": "bye"})
    later = await say(parley.owner, "leaver", "still there?")  # a topic it holds: delivered
    task = await parley.owner.post("/api/v1/tasks", json={"agent": "leaver", "text": "new"})
    assert task.status_code == 409
    assert "agent leaver is draining (bye) and takes no new work" in task.json()["message"]
    ada = parley.client(await parley.add_person("ada"))
    refused = await ada.post("/api/v1/conversations/leaver/messages", json={"text": "hi"})
    assert refused.status_code == 409
    gate.touch()  # the long turn ends; the topic it held is still answered
    _, end = await follow(parley.owner, later["run_id"])
    assert end["output"] == "got still there?"


async def test_200_messages_over_20_topics_with_max_sessions_3(
    tmp_path: Path, database_url: str
) -> None:
    """Under concurrency: no topic ever has two runs at once, no more than three run at once,
    and every message is handled exactly once. Real time here: the intervals come from the
    store's started/finished stamps, which bound each turn from outside."""
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        heartbeat_seconds=3600,
        sweep_seconds=3600,
    )
    rules = "otherwise: [{sleep: 0.005}, {reply: '{text}'}]"
    async with started(settings, SystemClock()) as parley:  # type: ignore[arg-type]
        await parley.hire("worker", brain=script(tmp_path, "worker", rules), max_sessions=3)
        people = [parley.client(await parley.add_person(f"p{n}")) for n in range(20)]
        sent = [f"m{n}" for n in range(200)]

        async def send(n: int) -> None:
            await say(people[n % 20], "worker", sent[n])

        await asyncio.gather(*(send(n) for n in range(200)))
        assert await eventually(lambda: _all_handled(parley), within=60)
        runs = await _runs(parley)
    _assert_no_overlap(runs, key="topic_id", most=1)
    _assert_no_overlap(runs, key=None, most=3)
    outputs = [line for run in runs for line in (run["output"] or "").splitlines()]
    assert sorted(outputs) == sorted(sent)  # each message answered once, none lost


async def _all_handled(parley: Harness) -> bool:
    async with parley.context.store.transaction() as tx:
        open_runs = (
            await tx.connection.execute(
                text("SELECT count(*) FROM runs WHERE state IN ('queued', 'running')")
            )
        ).scalar_one()
        unhandled = (
            await tx.connection.execute(
                text(
                    "SELECT count(*) FROM messages m LEFT JOIN runs r ON r.id = m.run_id"
                    " WHERE m.kind = 'text' AND (r.state IS NULL OR r.state <> 'finished')"
                )
            )
        ).scalar_one()
    return bool(open_runs == 0 and unhandled == 0)


async def _runs(parley: Harness) -> list[dict[str, Any]]:
    async with parley.context.store.transaction() as tx:
        rows = await tx.connection.execute(
            text("SELECT id, topic_id, started_at, finished_at, output FROM runs ORDER BY id")
        )
        return [dict(row._mapping) for row in rows]


def _assert_no_overlap(runs: list[dict[str, Any]], key: str | None, most: int) -> None:
    groups: dict[object, list[tuple[datetime, datetime]]] = {}
    for run in runs:
        groups.setdefault(run[key] if key else None, []).append(
            (run["started_at"], run["finished_at"])
        )
    for intervals in groups.values():
        events = sorted(
            [(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals]
        )
        running = 0
        for _, step in events:
            running += step
            assert running <= most


async def test_a_node_slow_to_take_its_turn_holds_up_no_other_node(
    parley: Harness, beta: NodeRunner, tmp_path: Path
) -> None:
    """The scheduler sends a turn off and goes on: a run on another node starts and finishes
    while the first node still sits on its turn, which is neither given up nor sent again."""
    asked: list[int] = []
    release = asyncio.Event()

    async def sits_on_it(data: bytes) -> bytes:
        asked.append(TurnStart.model_validate_json(data).run_id)
        await release.wait()
        return b'{"accepted": true}'

    sitting = await parley.context.broker.subscribe(turn_subject("beta"), sits_on_it)
    try:
        await parley.hire("far", node="beta")
        await parley.hire("near", brain=script(tmp_path, "near", ECHO))
        far = await say(parley.owner, "far", "hello")
        assert await eventually(lambda: _asked(asked))
        near = await say(parley.owner, "near", "ping")
        _, end = await follow(parley.owner, near["run_id"])
        assert end["output"] == "got ping"
        assert asked == [far["run_id"]] and await _running(parley, far["run_id"])
    finally:
        release.set()
        await sitting.unsubscribe()


async def _asked(asked: list[int]) -> bool:
    return bool(asked)
