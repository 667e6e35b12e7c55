"""What a running turn answers, for its own process to read (``parley act input``): who said
what, in which topic, the root it works for, its run and its agent. Authorised by the run's
token, as every action is: a command brain reads what it was started for, and nothing else."""

from __future__ import annotations

from dataclasses import dataclass

from parley.conversations.model import Message, Topic
from parley.hub.actions import describe, running_run
from parley.runs.model import Run
from parley.store import Tx


@dataclass(frozen=True)
class TurnInput:
    run: Run
    topic: Topic
    root: Topic | None  # None once its root is gone
    counterpart: str | None  # in an agent conversation, the other agent: the reply goes there
    said: list[Message]  # the new text of this turn, oldest first

    @property
    def topic_in_words(self) -> str:
        return describe(self.topic)

    @property
    def root_in_words(self) -> str:
        return describe(self.root) if self.root is not None else "gone"


async def turn_input(tx: Tx, token: str) -> TurnInput:
    run = await running_run(tx, token)
    topic = await tx.topics.by_id(run.topic_id)
    assert topic is not None, "a running run's topic stays (deleting it stops the run)"
    root = topic if topic.root_id == topic.id else await tx.topics.by_id(topic.root_id)
    said = await tx.messages.inputs(run.id)
    return TurnInput(run, topic, root, topic.other_role(run.agent_id), said)
