"""Recording how turns end: no run stays ``running`` because its outcome could not be stored.

A refused or malformed deferred action, a value the store cannot hold, any exception while
recording: the turn fails with its reason, in a transaction of its own, and the others of its
batch are recorded as they came."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import Connection

from parley.hub.outcomes import Outcome, record_loaded_outcome
from parley.hub.recorder import UNRECORDED, OutcomeRecorder
from parley.node.messages import ActionCall, RunEvent, run_outcomes_subject
from parley.runs.recovery import fail_and_requeue
from parley.store.effects import Effects
from parley.tokens import hash_token
from tests.runs.support import get, hold_a_turn, say
from tests.support import Harness, eventually, items


async def run_of(parley: Harness, run_id: int) -> dict[str, Any]:
    run: dict[str, Any] = (await get(parley.owner, f"/runs/{run_id}"))["run"]
    return run


async def ended(parley: Harness, run_id: int) -> dict[str, Any]:
    """The run once it is no longer running (the bound only guards against a wedge)."""

    async def over() -> bool:
        return (await run_of(parley, run_id))["state"] not in ("queued", "running")

    assert await eventually(over), f"run {run_id} stays running"
    return await run_of(parley, run_id)


async def report(parley: Harness, event: dict[str, Any], token: str | None = None) -> None:
    """What the turn's node (perhaps an old or faulty one) reports of its end, as raw JSON:
    with ``token``, the run's token and the start it answers, as any end must show."""
    if token is not None:
        event = {"run_token": token, "started_as": hash_token(token), **event}
    data = json.dumps(event).encode()
    await parley.context.broker.send_durable(run_outcomes_subject("local"), data, uuid.uuid4().hex)


async def test_a_deferred_action_with_an_unexpected_argument_fails_its_turn(
    parley: Harness, tmp_path: Path
) -> None:
    run_id, token = await hold_a_turn(parley, tmp_path, "holder")
    await report(
        parley,
        {
            "run_id": run_id,
            "kind": "finished",
            "text": "done",
            "actions": [
                {"name": "remember", "arguments": {"note": "first"}},
                {"name": "remember", "arguments": {"note": "planted", "bogus": "x"}},
            ],
        },
        token,
    )
    run = await ended(parley, run_id)
    assert run["state"] == "failed"
    assert "remember takes no argument 'bogus'" in run["reason"]
    assert items(await get(parley.owner, "/agents/holder/memory")) == []  # none of its actions
    # The session is not wedged: the next text gets a turn of its own.
    again = await say(parley.owner, "holder", "still there?")
    assert (await ended(parley, again["run_id"]))["output"] == "back again"


async def test_an_end_is_recorded_once_and_only_for_the_start_it_ends(
    parley: Harness, tmp_path: Path
) -> None:
    """An end of an earlier start of the run (a node that took the turn too late, after the run
    went back to waiting and started again) changes nothing; a second copy of the end (sent
    again, or handed over again after a hub died before acknowledging it) changes nothing."""
    run_id, token = await hold_a_turn(parley, tmp_path, "holder")
    earlier = hash_token("prt_an-earlier-start")
    current = hash_token(token)
    stale = {"run_id": run_id, "kind": "finished", "text": "stale", "started_as": earlier}
    await report(parley, stale, token)
    for _ in range(2):
        fresh = {"run_id": run_id, "kind": "finished", "text": "fresh", "started_as": current}
        await report(parley, fresh, token)
    assert (await ended(parley, run_id))["output"] == "fresh"
    again = await say(parley.owner, "holder", "still there?")  # ends after both copies
    assert (await ended(parley, again["run_id"]))["output"] == "back again"
    shown = await get(parley.owner, "/conversations/holder")
    replies = [m["body"] for m in items(shown["messages"]) if m["kind"] == "reply"]
    assert replies == ["back again", "fresh"]  # newest first


async def test_two_copies_of_an_end_in_one_batch_are_recorded_once(
    parley: Harness, tmp_path: Path
) -> None:
    run_id, token = await hold_a_turn(parley, tmp_path, "holder")
    end = Outcome(run_id, True, "fresh", run_token=token, started_as=hash_token(token))
    recorder = OutcomeRecorder(parley.context.store, parley.clock, parley.context.runtime.budget)
    await recorder.record([end, end])
    assert (await ended(parley, run_id))["output"] == "fresh"
    shown = await get(parley.owner, "/conversations/holder")
    assert [m["body"] for m in items(shown["messages"]) if m["kind"] == "reply"] == ["fresh"]


async def test_a_nul_byte_in_a_brain_s_reply_is_dropped_before_the_store(
    parley: Harness, tmp_path: Path
) -> None:
    program = tmp_path / "nul.py"
    program.write_text("import sys\nsys.stdout.write('before\\x00after')\n")
    await parley.hire("nully", brain=f"command:{sys.executable} {program}")
    queued = await say(parley.owner, "nully", "speak")
    run = await ended(parley, queued["run_id"])
    assert (run["state"], run["output"]) == ("finished", "beforeafter")
    shown = await get(parley.owner, "/conversations/nully")
    assert [m["body"] for m in items(shown["messages"]) if m["kind"] == "reply"] == ["beforeafter"]


async def test_a_nul_byte_in_a_deferred_argument_fails_its_turn_saying_where(
    parley: Harness, tmp_path: Path
) -> None:
    run_id, token = await hold_a_turn(parley, tmp_path, "holder")
    remember = {"name": "remember", "arguments": {"note": "a\x00b"}}
    event = {"run_id": run_id, "kind": "finished", "actions": [remember]}
    await report(parley, event, token)
    run = await ended(parley, run_id)
    assert run["state"] == "failed"
    assert "remember: note contains a NUL byte" in run["reason"]
    assert items(await get(parley.owner, "/agents/holder/memory")) == []


async def test_an_end_nested_past_the_parser_s_depth_is_ignored_and_later_ends_recorded(
    parley: Harness, tmp_path: Path
) -> None:
    """A node's report nested deeper than a JSON parser goes: it names no run, so it is
    ignored, and it holds up no other end (it used to fail its batch again and again)."""
    run_id, token = await hold_a_turn(parley, tmp_path, "holder")
    outcomes = run_outcomes_subject("local")
    await parley.context.broker.send_durable(outcomes, b"[" * 100_000, "deep")
    await report(parley, {"run_id": run_id, "kind": "finished", "text": "after"}, token)
    run = await ended(parley, run_id)
    assert (run["state"], run["output"]) == ("finished", "after")


async def test_a_malformed_report_that_names_no_run_is_ignored(parley: Harness) -> None:
    await report(parley, {"kind": "finished", "text": "whose?"})
    outcomes = run_outcomes_subject("local")
    await parley.context.broker.send_durable(outcomes, b"not json at all", "garbage")
    agents = items(await get(parley.owner, "/agents"))
    assert [agent["name"] for agent in agents] == ["node:local"]  # the hub goes on


def test_an_outcome_drops_nul_bytes_a_brain_wrote() -> None:
    event = RunEvent(run_id=3, kind="failed", text="bad\x00 news", brain_session_id="s\x001")
    subject = run_outcomes_subject("local")
    expected = Outcome(3, False, "bad news", brain_session_id="s1", subject=subject)
    assert Outcome.of(event, subject) == expected
    assert Outcome.of(event, subject).failed("why\x00 not") == Outcome(
        3, False, "why not", subject=subject
    )


# A store that refuses a value: a trigger, as any constraint or check of the database would.
# "poison" in a run's output or a message; "arsenic" in a run's output or even its reason.
REFUSING = {
    "sqlite": [
        "CREATE TRIGGER refuse_poison_run BEFORE UPDATE ON runs"
        " WHEN instr(NEW.output, 'poison') > 0"
        " BEGIN SELECT RAISE(ABORT, 'the store refuses poison'); END",
        "CREATE TRIGGER refuse_arsenic_run BEFORE UPDATE ON runs"
        " WHEN instr(NEW.output, 'arsenic') > 0 OR instr(NEW.reason, 'arsenic') > 0"
        " BEGIN SELECT RAISE(ABORT, 'the store refuses arsenic'); END",
        "CREATE TRIGGER refuse_poison_message BEFORE INSERT ON messages"
        " WHEN instr(NEW.body, 'poison') > 0"
        " BEGIN SELECT RAISE(ABORT, 'the store refuses poison'); END",
    ],
    "postgresql": [
        "CREATE FUNCTION refuse_poison_run() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        " IF position('poison' in NEW.output) > 0 THEN"
        " RAISE EXCEPTION 'the store refuses poison'; END IF;"
        " IF position('arsenic' in coalesce(NEW.output, '') || coalesce(NEW.reason, '')) > 0"
        " THEN RAISE EXCEPTION 'the store refuses arsenic'; END IF; RETURN NEW; END $$",
        "CREATE FUNCTION refuse_poison_message() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        " IF position('poison' in NEW.body) > 0 THEN"
        " RAISE EXCEPTION 'the store refuses poison'; END IF; RETURN NEW; END $$",
        "CREATE TRIGGER refuse_poison_run BEFORE UPDATE ON runs"
        " FOR EACH ROW EXECUTE FUNCTION refuse_poison_run()",
        "CREATE TRIGGER refuse_poison_message BEFORE INSERT ON messages"
        " FOR EACH ROW EXECUTE FUNCTION refuse_poison_message()",
    ],
}
FORGIVING = {
    "sqlite": [
        "DROP TRIGGER refuse_poison_run",
        "DROP TRIGGER refuse_arsenic_run",
        "DROP TRIGGER refuse_poison_message",
    ],
    "postgresql": [
        "DROP TRIGGER IF EXISTS refuse_poison_run ON runs",
        "DROP TRIGGER IF EXISTS refuse_poison_message ON messages",
        "DROP FUNCTION IF EXISTS refuse_poison_run()",
        "DROP FUNCTION IF EXISTS refuse_poison_message()",
    ],
}


async def _execute(parley: Harness, statements: list[str]) -> None:
    def run(connection: Connection) -> None:
        for statement in statements:
            connection.exec_driver_sql(statement)

    await parley.context.store.run_sync(run)


@pytest.fixture
async def refusing_poison(parley: Harness) -> AsyncIterator[None]:
    """The store refuses some runs and messages (see REFUSING)."""
    dialect = parley.context.store.dialect
    await _execute(parley, REFUSING[dialect])
    yield
    await _execute(parley, FORGIVING[dialect])  # PostgreSQL's database outlives the test


async def test_what_cannot_be_recorded_fails_its_turn_alone_and_the_batch_goes_on(
    parley: Harness, tmp_path: Path, refusing_poison: None
) -> None:
    names = ("fine", "poisoned", "arsenic", "malformed", "refused")
    held = {name: await hold_a_turn(parley, tmp_path, name) for name in names}
    kept = ActionCall(name="remember", arguments={"note": "kept"})
    # Past the wire's own check (a node of another version, a bug): the hub checks again.
    bogus = ActionCall.model_construct(name="remember", arguments={"note": "x", "bogus": "y"})
    to_ghost = ActionCall(name="send", arguments={"to": "ghost", "text": "hi"})

    def outcome(name: str, text: str, *actions: ActionCall) -> Outcome:
        run_id, token = held[name]
        return Outcome(run_id, True, text, actions=actions, run_token=token)

    recorder = OutcomeRecorder(parley.context.store, parley.clock, parley.context.runtime.budget)
    taken = await recorder.record(
        [
            outcome("fine", "all good", kept),
            outcome("poisoned", "poison"),
            outcome("arsenic", "arsenic"),
            outcome("malformed", "ok", bogus),
            outcome("refused", "ok", to_ghost),
        ]
    )
    assert taken == {run_id for run_id, _ in held.values()}  # each ended, one way or another
    runs = {name: await run_of(parley, run_id) for name, (run_id, _) in held.items()}
    assert (runs["fine"]["state"], runs["fine"]["output"]) == ("finished", "all good")
    assert [n["note"] for n in items(await get(parley.owner, "/agents/fine/memory"))] == ["kept"]
    expected = {
        "poisoned": "the store refuses poison",
        "malformed": "remember takes no argument 'bogus'",
        "refused": "no agent named 'ghost'",
    }
    for name, reason in expected.items():
        assert runs[name]["state"] == "failed", runs[name]
        assert reason in runs[name]["reason"]
    # Its reason is refused too: the run ends all the same, its reason in the hub's own words.
    assert (runs["arsenic"]["state"], runs["arsenic"]["reason"]) == ("failed", UNRECORDED)
    assert items(await get(parley.owner, "/agents/malformed/memory")) == []
    for name in names:  # no session is left waiting on a run that never ends
        again = await say(parley.owner, name, "still there?")
        assert (await ended(parley, again["run_id"]))["output"] == "back again"


async def test_a_turn_whose_outcome_the_store_refuses_fails_and_its_session_goes_on(
    parley: Harness, tmp_path: Path, refusing_poison: None
) -> None:
    from tests.runs.support import script

    rules = """
        rules:
          - when: {text: "^poi$"}
            do: [{reply: "{text}son"}]
        otherwise: [{reply: "{text}"}]
    """
    await parley.hire("echo", brain=script(tmp_path, "echo", rules))
    first = await say(parley.owner, "echo", "poi")
    run = await ended(parley, first["run_id"])
    assert run["state"] == "failed"
    # Its notice would say "poison" too, which the store refuses: the run ends all the same.
    assert "the store refuses poison" in run["reason"]
    second = await say(parley.owner, "echo", "milk")
    assert (await ended(parley, second["run_id"]))["output"] == "milk"


async def test_a_lost_store_connection_is_retried_not_blamed_on_the_turn(
    parley: Harness, tmp_path: Path, database_url: str
) -> None:
    if parley.context.store.dialect != "postgresql":
        pytest.skip("SQLite runs in this process: it has no connection to lose")
    run_id, _ = await hold_a_turn(parley, tmp_path, "holder")
    locker = await asyncpg.connect(database_url)
    try:
        holding = locker.transaction()
        await holding.start()
        await locker.execute("SELECT id FROM runs WHERE id = $1 FOR UPDATE", run_id)
        recorder = OutcomeRecorder(
            parley.context.store, parley.clock, parley.context.runtime.budget
        )
        recording = asyncio.create_task(recorder.record([Outcome(run_id, True, "survived")]))
        waiting: list[int] = []

        async def recorder_waits() -> bool:
            rows = await locker.fetch(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND datname = current_database() AND pid <> pg_backend_pid()"
            )
            waiting[:] = [row["pid"] for row in rows]
            return bool(waiting)

        assert await eventually(recorder_waits)
        await locker.execute("SELECT pg_terminate_backend($1)", waiting[0])
        await holding.rollback()
        await recording
    finally:
        await locker.close()
    run = await run_of(parley, run_id)
    assert (run["state"], run["output"]) == ("finished", "survived")


async def test_an_outcome_for_a_run_ended_meanwhile_applies_nothing(
    parley: Harness, tmp_path: Path
) -> None:
    """The outcome's run was read running, then ended by someone else (its node lost, a hub
    back from a stop) before the outcome was recorded: its text was queued again, so nothing of
    the late outcome applies, or the next turn would answer it a second time."""
    run_id, token = await hold_a_turn(parley, tmp_path, "holder")
    async with parley.context.store.transaction() as tx:
        stale = await tx.runs.by_id(run_id)
        assert stale is not None
        topic = await tx.topics.by_id(stale.topic_id)
    async with parley.context.store.transaction() as tx:
        assert await fail_and_requeue(tx, parley.clock, [stale], "node_lost") == 1
    late = Outcome(
        run_id,
        True,
        "late answer",
        actions=(ActionCall(name="remember", arguments={"note": "late"}),),
        run_token=token,
    )
    async with parley.context.store.transaction() as tx:
        budget = parley.context.runtime.budget
        assert await record_loaded_outcome(tx, parley.clock, late, stale, topic, budget) is None
    run = await run_of(parley, run_id)
    assert (run["state"], run["reason"], run["output"]) == ("failed", "node_lost", None)
    assert items(await get(parley.owner, "/agents/holder/memory")) == []
    conversation = await get(parley.owner, f"/topics/{stale.topic_id}/messages")
    assert "late answer" not in [m["body"] for m in items(conversation)]


async def test_a_batch_is_recorded_in_one_transaction(parley: Harness, tmp_path: Path) -> None:
    """Group commit: a batch of ends, every end twice (a redelivered batch, say), commits once,
    and each end is recorded once."""
    held = [await hold_a_turn(parley, tmp_path, f"holder{n}") for n in range(4)]
    ends = [
        Outcome(run_id, True, f"fresh {n}", run_token=token, started_as=hash_token(token))
        for n, (run_id, token) in enumerate(held)
    ]
    ours = {run_id for run_id, _ in held}
    committed: list[list[int]] = []  # the ends each commit recorded, of these runs

    async def count(effects: Effects) -> None:
        if recorded := [c.run.id for c in effects.changed if c.run.id in ours]:
            committed.append(recorded)

    stop_counting = parley.context.store.subscribe(count)
    try:
        recorder = OutcomeRecorder(
            parley.context.store, parley.clock, parley.context.runtime.budget
        )
        await recorder.record(ends + ends)
    finally:
        stop_counting()
    assert [sorted(recorded) for recorded in committed] == [sorted(ours)]
    for n, (run_id, _) in enumerate(held):
        assert (await ended(parley, run_id))["output"] == f"fresh {n}"
        shown = await get(parley.owner, f"/conversations/holder{n}")
        assert [m["body"] for m in items(shown["messages"]) if m["kind"] == "reply"] == [
            f"fresh {n}"
        ]
