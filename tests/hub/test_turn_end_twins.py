"""The two ways a turn's end is recorded — a batch's plain replies together
(``hub/plain_replies.py``) and each end alone (``hub/outcomes.py:record_loaded_outcome``) — kept
equal: the same random ends, recorded by a batch in one world and one at a time in its twin,
leave the same rows (runs, sessions, messages, hops, topics, outbox). A rule written on one
side only (a hop not counted, a session not updated, a stale start not ignored) shows here as a
row that differs."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from itertools import count
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import Table, select

from parley.conversations.lifetime import close_root
from parley.conversations.model import LOCAL, HopBudget, TopicKind, pair_key
from parley.hub.outcomes import Outcome
from parley.hub.recorder import OutcomeRecorder
from parley.runs.queueing import queue_text
from parley.store.tables import agents, hop_counts, messages, outbox, runs, sessions, topics
from parley.tokens import hash_token
from tests.support import Harness

PAIRS = 4
WORLDS = count()


@dataclass(frozen=True)
class End:
    """One reported end of pair ``pair``'s held turn, as a node could report it."""

    pair: int
    text: str
    succeeded: bool = True
    stopped: bool = False
    stale: bool = False  # the end of an earlier start of the run
    brain_session: str | None = None
    stderr: str | None = None


@dataclass(frozen=True)
class Pair:
    run_id: int
    token: str


@dataclass(frozen=True)
class Example:
    ends: list[End]
    closed: set[int]  # pairs whose root is deleted before the ends come
    hops: int  # the hop budget per origin


_ends = st.builds(
    End,
    pair=st.integers(0, PAIRS - 1),
    text=st.sampled_from(["the answer", "the answer", "another answer", "", "x" * 70_000]),
    succeeded=st.sampled_from([True, True, True, False]),
    stopped=st.sampled_from([False] * 5 + [True]),
    stale=st.sampled_from([False] * 5 + [True]),
    brain_session=st.sampled_from([None, "s-1"]),
    stderr=st.sampled_from([None, "warned"]),
)
# One end for each of some pairs, so that a batch holds plain replies of several runs (the
# batched path takes two or more), then a few more: a copy of one (changes nothing) or another
# end of a pair (its run goes one by one). Ten ends drawn freely over four pairs gave most runs
# two different ends, and the batched path ran in one example of 25.
_ENDS = st.lists(_ends, min_size=1, max_size=PAIRS, unique_by=lambda end: end.pair).flatmap(
    lambda firsts: st.lists(st.sampled_from(firsts) | _ends, max_size=3).map(
        lambda more: firsts + more
    )
)
EXAMPLES = st.builds(
    Example,
    ends=_ENDS.flatmap(st.permutations),
    closed=st.sets(st.integers(0, PAIRS - 1), max_size=1),
    hops=st.integers(1, 6),
)


async def _world(parley: Harness, closed: set[int]) -> tuple[str, list[Pair]]:
    """PAIRS asker/holder pairs, each holder's turn running in their agent conversation under
    a task of the asker's; the scheduler is stopped, so nothing else moves."""
    prefix = f"w{next(WORLDS)}"
    for n in range(PAIRS):
        await parley.hire(f"{prefix}asker{n}")
        await parley.hire(f"{prefix}holder{n}")
    pairs, roots, now = [], [], parley.clock.now()
    async with parley.context.store.transaction() as tx:
        for n in range(PAIRS):
            asker = await tx.agents.by_name(f"{prefix}asker{n}")
            holder = await tx.agents.by_name(f"{prefix}holder{n}")
            assert asker is not None and holder is not None
            root = await tx.topics.insert(TopicKind.TASK, asker.id, now, text="the task")
            conversation = await tx.topics.insert(
                TopicKind.AGENT_CONVERSATION,
                holder.id,
                now,
                connection=LOCAL,
                root_topic_id=root.id,
                origin_topic_id=root.id,
                sender_agent_id=asker.id,
                pair_key=pair_key(asker.name, holder.name),
                thread_id=secrets.token_hex(16),
            )
            queued = await queue_text(
                tx, now, conversation, holder, "a question", author_agent_id=asker.id
            )
            token = f"prt_{secrets.token_hex(8)}"
            assert await tx.runs.start_many({queued.run_id: hash_token(token)}, now)
            if n in closed:
                roots.append(root)
            pairs.append(Pair(queued.run_id, token))
    async with parley.context.store.transaction() as tx:  # its held turn is stopped with it
        for root in roots:
            await close_root(tx, now, root, "deleted")
    return prefix, pairs


def _outcome(end: End, pair: Pair) -> Outcome:
    started_as = hash_token("prt_an-earlier-start" if end.stale else pair.token)
    return Outcome(
        pair.run_id,
        end.succeeded,
        end.text if end.succeeded else f"it broke: {end.text}",
        brain_session_id=end.brain_session,
        run_token=pair.token,
        stderr=end.stderr,
        stopped=end.stopped,
        started_as=started_as,
    )


async def _rows(parley: Harness, prefix: str) -> dict[str, list[Any]]:
    """Every row of the world's runs, sessions, messages, hops and topics, and the outbox's
    rows about them, with each id replaced by what it names within the world."""
    async with parley.context.store.transaction() as tx:
        # The world's rows alone: the store holds every earlier example's worlds too.
        named_here = [f"{prefix}{role}{n}" for role in ("asker", "holder") for n in range(PAIRS)]
        agents_here = await tx.connection.execute(
            select(agents.c.id, agents.c.name).where(agents.c.name.in_(named_here))
        )
        names = {row.id: row.name for row in agents_here}

        async def read(table: Table, *where: Any) -> list[Any]:
            rows = await tx.connection.execute(select(table).where(*where))
            return [row._asdict() for row in rows]

        every = {t.name: await read(t, t.c.agent_id.in_(names)) for t in (topics, sessions, runs)}
        world = [row["id"] for row in every["topics"]]
        every["messages"] = await read(messages, messages.c.topic_id.in_(world))
        every["hop_counts"] = await read(hop_counts, hop_counts.c.origin_topic_id.in_(world))
        every["outbox"] = await read(outbox)
    agent = {i: name.removeprefix(prefix) for i, name in names.items()}
    topic = {t: f"topic{n}" for n, t in enumerate(sorted(world))}
    session = {r["id"]: (agent[r["agent_id"]], topic[r["topic_id"]]) for r in every["sessions"]}
    by_session: dict[Any, int] = {}
    run = {}
    for r in sorted(every["runs"], key=lambda r: r["id"]):
        key = session[r["session_id"]]
        run[r["id"]] = (*key, by_session.setdefault(key, 0))
        by_session[key] += 1
    ids: dict[str, dict[Any, Any]] = {
        "agent_id": agent, "author_agent_id": agent, "recipient_agent_id": agent,
        "reply_agent_id": agent, "sender_agent_id": agent, "topic_id": topic,
        "root_topic_id": topic, "origin_topic_id": topic, "reply_topic_id": topic,
        "parent_topic_id": topic, "session_id": session, "run_id": run, "from_run_id": run,
    }  # fmt: skip

    def named(row: dict[str, Any], own: dict[int, Any] | None) -> tuple[Any, ...]:
        fields = {k: ids[k].get(v, v) if k in ids and v is not None else v for k, v in row.items()}
        fields = {k: v.replace(prefix, "") if isinstance(v, str) else v for k, v in fields.items()}
        fields["id"] = own.get(row["id"]) if own is not None else None
        fields.pop("thread_id", None)  # random, by design
        fields.pop("token_hash", None)  # each world's runs have tokens of their own
        fields.pop("pair_key", None)  # names the world's agents
        return tuple(sorted(fields.items(), key=lambda kv: kv[0]))

    found = {
        "topics": [named(r, topic) for r in every["topics"]],
        "sessions": [named(r, session) for r in every["sessions"]],
        "runs": [named(r, run) for r in every["runs"]],
        "messages": [named(r, None) for r in every["messages"]],
        "hop_counts": [named({**r, "id": None}, None) for r in every["hop_counts"]],
        "outbox": [
            (r["kind"], r["state"])
            for r in every["outbox"]
            if any(f": {run_id}," in r["payload"] for run_id in run)
        ],
    }
    return {name: sorted(rows, key=repr) for name, rows in found.items()}


@pytest.fixture
async def halted(parley: Harness) -> Harness:
    await parley.context.runtime.scheduler.stop()  # nothing starts: the rows stay as recorded
    return parley


@settings(
    max_examples=25,
    print_blob=True,
    phases=[
        Phase.explicit,
        Phase.reuse,
        Phase.generate,
    ],  # each example is two worlds: no shrinking
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(example=EXAMPLES)
async def test_a_batch_of_ends_leaves_the_rows_each_end_alone_leaves(
    halted: Harness, example: Example
) -> None:
    parley = halted
    budget = HopBudget(hops=example.hops, window=timedelta(hours=1))
    recorder = OutcomeRecorder(parley.context.store, parley.clock, budget)
    together, alone = await _world(parley, example.closed), await _world(parley, example.closed)
    await recorder.record([_outcome(end, together[1][end.pair]) for end in example.ends])
    for end in example.ends:
        await recorder.record([_outcome(end, alone[1][end.pair])])
    batched, one_by_one = await _rows(parley, together[0]), await _rows(parley, alone[0])
    for table, rows in batched.items():  # what differs, table by table
        only_batched = [row for row in rows if row not in one_by_one[table]]
        only_alone = [row for row in one_by_one[table] if row not in rows]
        assert (table, only_batched, only_alone) == (table, [], [])
    assert batched == one_by_one
