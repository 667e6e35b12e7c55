"""Reading runs: as far as the reader may read their topic; and the turns waiting for a person
who answers as a human agent."""

from __future__ import annotations

from collections.abc import Sequence

from parley.agents.lookup import agent_by_name
from parley.conversations.model import Topic
from parley.errors import NotFound
from parley.people.model import Person
from parley.reads import cursors
from parley.reads.model import Page, RunDetail, RunLineage
from parley.reads.topics import readable_topic, views
from parley.runs.model import Run, RunState
from parley.store import Tx


async def readable_run(tx: Tx, reader: Person, run_id: int) -> Run:
    run = await tx.runs.readable(reader, run_id)
    if run is None:
        raise NotFound(f"no run {run_id}")
    return run


async def runs_page(
    tx: Tx,
    reader: Person,
    agent: str | None = None,
    states: Sequence[RunState] | None = None,
    topic: int | None = None,
    limit: int | None = None,
    before: str | None = None,
) -> Page[Run]:
    """Runs the reader may read, newest first: of one ``agent``, in some ``states``, in one
    ``topic``. A page holds ``limit`` readable runs whenever there are that many."""
    window = cursors.window(cursors.RUNS, limit, before)
    agent_id = None if agent is None else (await agent_by_name(tx, agent)).id
    if topic is not None:
        await readable_topic(tx, reader, topic)
    found = await tx.runs.readable_page(reader, window, agent_id, states, topic)
    return cursors.page(cursors.RUNS, found)


async def runs_of(
    tx: Tx, reader: Person, topic: Topic, limit: int | None = None, before: str | None = None
) -> Page[Run]:
    """``topic``'s runs, as ``runs_page(topic=...)`` lists them; ``topic`` is one the reader
    may read (a single read's), so not checked again."""
    window = cursors.window(cursors.RUNS, limit, before)
    found = await tx.runs.readable_page(reader, window, topic_id=topic.id)
    return cursors.page(cursors.RUNS, found)


async def run_detail(tx: Tx, run: Run) -> RunDetail:
    """``run`` is one its reader may read (``readable_run``), or a turn of their own."""
    topic = await tx.topics.by_id(run.topic_id)
    assert topic is not None
    (view,) = await views(tx, [topic])
    stderr = await tx.runs.stderr_of(run.id)
    calls = await tx.tool_calls.of_run(run.id)
    return RunDetail(run, view, await tx.messages.given_to(run.id), stderr, calls)


MAX_SET_OFF = 100  # subtask runs shown for one run


async def run_lineage(tx: Tx, reader: Person, run_id: int) -> RunLineage:
    """A run ``reader`` may read, with the run that set it off and those it set off, as far as
    the reader may read them."""
    detail = await run_detail(tx, await readable_run(tx, reader, run_id))
    spawner_id = detail.view.topic.spawned_by_run_id
    spawner = None if spawner_id is None else await tx.runs.readable(reader, spawner_id)
    return RunLineage(detail, spawner, await tx.runs.set_off_by(run_id, MAX_SET_OFF))


async def turns_page(
    tx: Tx, person: Person, limit: int | None = None, before: str | None = None
) -> Page[RunDetail]:
    """Turns of the human agents that are this person, waiting for their answer, oldest first
    (the order they wait in)."""
    window = cursors.window(cursors.TURNS, limit, before)
    found = await tx.runs.turns_page(person.id, window)
    details = [await run_detail(tx, run) for run in found.items]
    return Page(details, cursors.encode_next(cursors.TURNS, found.next_key))
