"""Which turns' ends the hub takes (hub/end_checks.py): only from the node the turn was sent to
(the subject it came on), for the run's current start, with the run's token. Anything else is
dropped with a WARNING naming the subject and the run it claims, and changes no run.

The test is the node: its runs are started in the store as the scheduler starts them (no brain
works on them), and the test reports their ends, and forges others, over the broker — the
in-process one, and a real nats-server."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import Enum
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.broker.nats_broker import NatsBroker
from parley.hub.outcomes import Outcome
from parley.hub.recorder import OutcomeRecorder
from parley.node.messages import (
    RUN_OUTCOMES_OF_NO_NODE,
    RunEvent,
    run_events_subject,
    run_outcomes_subject,
)
from parley.runs.model import INTERRUPTED, Run, RunState
from parley.settings import Settings
from parley.tokens import hash_token, new_run_token
from tests.agents.support import queue_task
from tests.nats_server import NatsServer
from tests.runs.support import get
from tests.support import Harness, ManualClock, items, started

CHECKS = "parley.hub.end_checks"
Kind = Literal["finished", "failed", "stopped"]


@pytest.fixture(params=["in-process", "nats"])
async def hub(
    request: pytest.FixtureRequest, settings: Settings, clock: ManualClock
) -> AsyncIterator[Harness]:
    """A hub on the in-process broker, or on a real nats-server (both stores, as ``parley``)."""
    if request.param == "in-process":
        async with started(settings, clock) as harness:
            await harness.hire("scribe", max_sessions=100)
            yield harness
        return
    server: NatsServer = request.getfixturevalue("nats_server")
    async with on_nats(server) as broker, started(settings, clock, broker) as harness:
        await harness.hire("scribe", max_sessions=100)
        yield harness


@asynccontextmanager
async def on_nats(server: NatsServer) -> AsyncIterator[NatsBroker]:
    broker = await NatsBroker.connect(server.url)
    try:
        yield broker
    finally:
        await broker.close()


@pytest.fixture(autouse=True)
def _warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="parley.hub")


async def running(parley: Harness, agent: str = "scribe") -> tuple[int, str]:
    """A run started on its agent's node, and its token, as the scheduler starts one."""
    token, now = new_run_token(), parley.clock.now()
    async with parley.context.store.transaction() as tx:
        run_id = await queue_task(tx, agent, now, "work")
        assert await tx.runs.start_many({run_id: hash_token(token)}, now)
    return run_id, token


class Start(Enum):
    OF_ITS_TOKEN = "the start its token was given"


def end(
    run_id: int,
    token: str | None,
    kind: Kind = "finished",
    text: str = "done",
    started_as: str | Start | None = Start.OF_ITS_TOKEN,
) -> RunEvent:
    """An end of ``run_id`` showing ``token`` and naming ``started_as`` (by default, the start
    ``token`` was given)."""
    if started_as is Start.OF_ITS_TOKEN:
        started_as = None if token is None else hash_token(token)
    return RunEvent(run_id=run_id, kind=kind, text=text, run_token=token, started_as=started_as)


async def send(parley: Harness, event: RunEvent, node: str = "local") -> None:
    """Store ``event`` on ``node``'s subject, with an id of its own (a replay, or a forgery, is
    not the broker's duplicate)."""
    data = event.model_dump_json().encode()
    await parley.context.broker.send_durable(run_outcomes_subject(node), data, uuid.uuid4().hex)


async def handled(parley: Harness) -> None:
    """Once every end stored so far was taken, or dropped."""
    await parley.context.runtime.scheduler.caught_up()


async def run_of(parley: Harness, run_id: int) -> Run:
    async with parley.context.store.transaction() as tx:
        run = await tx.runs.by_id(run_id)
    assert run is not None
    return run


def dropped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == CHECKS and record.levelno == logging.WARNING
    ]


async def test_the_genuine_end_is_recorded(hub: Harness, caplog: pytest.LogCaptureFixture) -> None:
    run_id, token = await running(hub)
    await send(hub, end(run_id, token, text="the answer"))
    await handled(hub)
    run = await run_of(hub, run_id)
    assert (run.state, run.output) == (RunState.FINISHED, "the answer")
    assert dropped(caplog) == []


async def test_an_end_from_another_node_changes_nothing_even_with_the_token(
    hub: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Another node (its credentials let it publish on its own subject only) sends the end of a
    run of ``local``: even with the run's token and start, it is not the run's node."""
    run_id, token = await running(hub)
    await send(hub, end(run_id, token, text="forged"), node="gpu1")
    await handled(hub)
    assert (await run_of(hub, run_id)).state is RunState.RUNNING
    [warning] = dropped(caplog)
    assert warning == (
        f"dropped an end on {run_outcomes_subject('gpu1')} claiming run {run_id}:"
        " wrong node: the run is on node 'local', not 'gpu1'"
    )


@pytest.mark.parametrize(
    ("token", "started_as", "why"),
    [
        ("right", None, "no start"),
        ("right", "prt_another-start", "stale start"),
        (None, "right", "bad token"),
        ("prt_not-the-run-s", "right", "bad token"),
        (None, None, "no start"),
    ],
)
async def test_an_end_without_the_proofs_changes_nothing(
    hub: Harness, caplog: pytest.LogCaptureFixture, token: str, started_as: str, why: str
) -> None:
    run_id, right = await running(hub)
    shown = right if token == "right" else token
    start = hash_token(right if started_as == "right" else started_as) if started_as else None
    await send(hub, end(run_id, shown, kind="failed", text="forged", started_as=start))
    await handled(hub)
    assert (await run_of(hub, run_id)).state is RunState.RUNNING
    [warning] = dropped(caplog)
    assert warning.startswith(
        f"dropped an end on {run_outcomes_subject('local')} claiming run {run_id}: {why}:"
    )
    # The genuine end, after: the run was left as it was for it.
    await send(hub, end(run_id, right, text="genuine"))
    await handled(hub)
    assert (await run_of(hub, run_id)).output == "genuine"


async def test_the_end_of_an_earlier_start_of_the_run_changes_nothing(
    hub: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Its node took the turn too late: the run went back to waiting and started again with
    another token. The earlier start's end, token and all, does not end the later start."""
    run_id, earlier = await running(hub)
    later = new_run_token()
    async with hub.context.store.transaction() as tx:
        await tx.runs.requeue(run_id)
        assert await tx.runs.start_many({run_id: hash_token(later)}, hub.clock.now())
    await send(hub, end(run_id, earlier, text="late"))
    await handled(hub)
    assert (await run_of(hub, run_id)).state is RunState.RUNNING
    assert [w.split(": ")[1] for w in dropped(caplog)] == ["stale start"]


async def test_a_replayed_end_changes_nothing(hub: Harness) -> None:
    """A genuine end sent again, as itself or with other words, once the run has ended."""
    run_id, token = await running(hub)
    await send(hub, end(run_id, token, text="first"))
    await handled(hub)
    for again in (end(run_id, token, text="first"), end(run_id, token, "failed", "second")):
        await send(hub, again)
    await handled(hub)
    run = await run_of(hub, run_id)
    assert (run.state, run.output, run.reason) == (RunState.FINISHED, "first", None)
    said = items(await get(hub.owner, f"/topics/{run.topic_id}/messages"))
    assert [m["body"] for m in said if m["kind"] == "reply"] == ["first"]


async def test_a_batch_of_forged_and_genuine_ends_records_the_genuine_ones(
    hub: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    held = [await running(hub) for _ in range(4)]
    (one, one_token), (two, two_token), (three, three_token), (four, _) = held
    sent = [
        (end(one, one_token, text="forged"), "gpu1"),
        (end(two, two_token, text="genuine two"), "local"),
        (end(three, three_token, started_as=None, text="forged"), "local"),
        (end(four, one_token, text="forged with another run's token"), "local"),
        (end(2**70, one_token, text="of no run a store could hold"), "local"),
        (end(one, one_token, text="genuine one"), "local"),
        (end(three, three_token, "failed", "genuine three"), "local"),
    ]
    for event, node in sent:  # back to back: one batch, or few
        await send(hub, event, node)
    await handled(hub)
    runs = {run_id: await run_of(hub, run_id) for run_id, _ in held}
    assert [(runs[r].state, runs[r].output or runs[r].reason) for r, _ in held] == [
        (RunState.FINISHED, "genuine one"),
        (RunState.FINISHED, "genuine two"),
        (RunState.FAILED, "genuine three"),
        (RunState.RUNNING, None),
    ]
    assert [w.split(": ")[1] for w in dropped(caplog)] == [
        "wrong node",
        "no start",
        "stale start",
        "no such run",
    ]


async def test_a_batch_s_checks_take_the_genuine_ends_only_and_say_which(
    parley: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """The recorder checks a batch's ends in its own transaction, on the runs it reads to record
    them: what it takes is recorded and returned, nothing else changes."""
    await parley.hire("scribe", max_sessions=10)
    (one, token), (two, _) = await running(parley), await running(parley)

    def claim(run_id: int, shown: str, node: str = "local") -> Outcome:
        subject = run_outcomes_subject(node)
        return Outcome(
            run_id,
            True,
            f"run {run_id}",
            run_token=shown,
            started_as=hash_token(shown),
            subject=subject,
        )

    claims = [claim(two, token), claim(one, token, "beta"), claim(one, token), claim(404, token)]
    recorder = OutcomeRecorder(parley.context.store, parley.clock, parley.context.runtime.budget)
    assert await recorder.record(claims) == {one}
    assert (await run_of(parley, one)).state is RunState.FINISHED
    assert (await run_of(parley, two)).state is RunState.RUNNING
    assert [w.split(": ")[1] for w in dropped(caplog)] == [
        "stale start",
        "wrong node",
        "no such run",
    ]


async def test_an_unreadable_end_fails_its_turn_only_with_the_proofs(
    hub: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """An end the hub cannot read still ends its turn, failed, saying why — if it shows what
    any end must; else it is one more forgery."""
    (bare, _), (proven, token) = await running(hub), await running(hub)
    for run_id, proofs in ((bare, {}), (proven, {"run_token": token})):
        event: dict[str, Any] = {"run_id": run_id, "kind": "finished", "text": 7, **proofs}
        if proofs:
            event["started_as"] = hash_token(token)
        data = json.dumps(event).encode()
        await hub.context.broker.send_durable(run_outcomes_subject("local"), data, str(run_id))
    await handled(hub)
    assert (await run_of(hub, bare)).state is RunState.RUNNING
    failed = await run_of(hub, proven)
    assert failed.state is RunState.FAILED
    assert failed.reason is not None and "a form the hub cannot take" in failed.reason
    assert [w.split(": ")[1] for w in dropped(caplog)] == ["no start"]


async def test_an_end_on_the_subject_of_earlier_versions_is_dropped_with_a_warning(
    hub: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """What an upgraded hub's broker still holds on the subject every node shared names no
    node: it changes nothing (the run, if no node holds it, is judged interrupted)."""
    run_id, token = await running(hub)
    data = end(run_id, token, text="from before").model_dump_json().encode()
    await hub.context.broker.send_durable(RUN_OUTCOMES_OF_NO_NODE, data, "before")
    await handled(hub)
    assert (await run_of(hub, run_id)).state is RunState.RUNNING
    [warning] = dropped(caplog)
    assert warning.startswith(
        f"dropped an end on {RUN_OUTCOMES_OF_NO_NODE} claiming run {run_id}: it names no node"
    )


async def test_a_chunk_from_another_node_never_reaches_a_watcher(
    hub: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    run_id, _ = await running(hub)
    broker = hub.context.broker

    def chunk(text: str, of: int = run_id) -> bytes:
        return RunEvent(run_id=of, kind="chunk", text=text).model_dump_json().encode()

    with hub.context.runtime.watch.watching(run_id) as watched:
        # One publisher, one subscription: the genuine chunk comes after the forged ones.
        await broker.publish(run_events_subject("gpu1"), chunk("forged"))
        await broker.publish(run_events_subject("local"), chunk("of no run", of=2**70))
        await broker.publish(run_events_subject("local"), chunk("genuine"))
        first = await asyncio.wait_for(watched.get(), 10)
        assert (first.kind, first.text) == ("chunk", "genuine")
    with hub.context.runtime.watch.watching(run_id) as later:  # what a late watcher is shown
        assert [later.get_nowait().text for _ in range(later.qsize())] == ["genuine"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


# Random ends, forged in every way, mixed with the genuine ones: only the genuine ones change
# runs, and each run ends as its first genuine finish or failure says (a node's "stopped" end
# changes no run's state).

RUNS = 3
_forgery = st.fixed_dictionaries(
    {
        "run": st.integers(0, RUNS - 1),
        "node": st.sampled_from(["local", "gpu1", "beta", "local-2"]),
        "token": st.one_of(st.none(), st.just("other-run"), st.text(max_size=40), st.just("right")),
        "started_as": st.one_of(
            st.none(), st.just("other-run"), st.text(max_size=64), st.just("right")
        ),
        "kind": st.sampled_from(["finished", "failed", "stopped"]),
        "text": st.text(max_size=20),
    }
)
_genuine = st.fixed_dictionaries(
    {
        "run": st.integers(0, RUNS - 1),
        "kind": st.sampled_from(["finished", "failed", "stopped"]),
        "text": st.text(alphabet="abcdef ", min_size=1, max_size=10).map(str.strip),
    }
)
_ends = st.lists(st.one_of(_forgery, _genuine.map(lambda g: {**g, "genuine": True})), max_size=12)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ends=_ends)
async def test_only_genuine_ends_change_runs(parley: Harness, ends: list[dict[str, Any]]) -> None:
    if (await parley.owner.get("/api/v1/agents/scribe")).status_code == 404:
        await parley.hire("scribe", max_sessions=1000)
    held = [await running(parley) for _ in range(RUNS)]
    tokens = [token for _, token in held]
    expected: dict[int, tuple[RunState, str | None]] = {}
    for sent in ends:
        run_id, right = held[sent["run"]]
        if sent.get("genuine"):
            event, node = end(run_id, right, sent["kind"], sent["text"] or "x"), "local"
            if sent["kind"] != "stopped" and run_id not in expected:
                state = RunState.FINISHED if sent["kind"] == "finished" else RunState.FAILED
                expected[run_id] = (state, sent["text"] or "x")
        else:
            shown = _forged(sent["token"], right, tokens)
            start = _forged(sent["started_as"], right, tokens)
            hashed = None if start is None else hash_token(start)
            if sent["started_as"] not in ("right", "other-run"):
                hashed = start  # a text of its own, not a hash of a token
            event = end(run_id, shown, sent["kind"], sent["text"], started_as=hashed)
            node = sent["node"]
            if node == "local" and shown == right and hashed == hash_token(right):
                continue  # not a forgery: everything a genuine end shows
        await send(parley, event, node)
    await handled(parley)
    for run_id, _ in held:
        run = await run_of(parley, run_id)
        state, words = expected.get(run_id, (RunState.RUNNING, None))
        assert run.state is state
        if state is RunState.FINISHED:
            assert run.output == words
        if state is RunState.FAILED:
            assert run.reason == words


def _forged(choice: str | None, right: str, tokens: list[str]) -> str | None:
    """What a forgery shows: nothing, another run's token, the right one, or a text."""
    if choice == "right":
        return right
    if choice == "other-run":
        return next(token for token in tokens if token != right)
    return choice


async def test_a_hub_upgraded_with_an_end_on_the_old_subject_drops_it_and_the_turn_waits_again(
    settings: Settings,
    clock: ManualClock,
    nats_server: NatsServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A turn ended while its hub was being upgraded: its end was stored on the subject every
    node shared. The upgraded hub cannot tell which node sent it: it drops it, and the turn, which
    no node holds, fails as interrupted at the start; its text waits for the next turn."""
    async with on_nats(nats_server) as broker, started(settings, clock, broker) as before:
        await before.hire("scribe", max_sessions=100)
        run_id, token = await running(before)
    async with on_nats(nats_server) as left:  # what the node of before stored meanwhile
        data = end(run_id, token, text="from before").model_dump_json().encode()
        await left.send_durable(RUN_OUTCOMES_OF_NO_NODE, data, "before")
    async with on_nats(nats_server) as broker, started(settings, clock, broker) as after:
        run = await run_of(after, run_id)
        assert (run.state, run.reason, run.output) == (RunState.FAILED, INTERRUPTED, None)
    [warning] = dropped(caplog)
    assert f"on {RUN_OUTCOMES_OF_NO_NODE} claiming run {run_id}: it names no node" in warning
