"""Human agents: same category, other modality. Their turn is not run on a node:
it waits as a notice to their person, and the person's answer ends it, like a brain's reply."""

from __future__ import annotations

from parley.clock import Clock
from parley.conversations.hops import acting_under_root
from parley.conversations.model import HopBudget, TaskStatus, TopicKind
from parley.conversations.tasks import end_task
from parley.errors import Conflict, Invalid, NotFound
from parley.hub.outcomes import ActionsRefused, Outcome, record_loaded_outcome, replies_to_agent
from parley.people.model import Person
from parley.runs.model import Run, RunState
from parley.runs.queueing import check_text
from parley.store import Tx


async def answer_turn(
    tx: Tx,
    clock: Clock,
    budget: HopBudget,
    person: Person,
    run_id: int,
    text: str,
    complete: bool = False,
) -> Run:
    """End the turn with ``text``; with ``complete``, also complete the task it works on (its
    spawner then hears of it, as from any agent). The answer goes where any brain's reply goes
    (``outcomes.py``): in an agent conversation, to the other agent, within the hop budget."""
    check_text(text, "answer")
    run = await tx.runs.by_id(run_id)
    agent = await tx.agents.by_id(run.agent_id) if run else None
    if run is None or agent is None or agent.human_person != person.name:
        raise NotFound(f"no turn {run_id} waits for your answer")
    if run.state is not RunState.RUNNING:
        raise Conflict(f"run {run_id} is {run.state.value}; it waits for no answer")
    topic = await tx.topics.by_id(run.topic_id)
    assert topic is not None
    if complete:
        if topic.kind is not TopicKind.TASK:
            raise Invalid(f"run {run_id} answers no task; answer without completing")
        await end_task(tx, clock, topic, TaskStatus.DONE, text, run)
    if replies_to_agent(topic, text):
        await acting_under_root(tx, run, topic)  # as any run that acts
    try:
        await record_loaded_outcome(tx, clock, Outcome(run.id, True, text), run, topic, budget)
    except ActionsRefused as refused:
        raise Conflict(refused.message) from None
    answered = await tx.runs.by_id(run.id)
    assert answered is not None
    return answered
