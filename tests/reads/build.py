"""Building random worlds through the library — people, conversations, tasks, subtasks, agent
conversations, runs and deletions — and recording their shape in the pure model.

No run ever starts (the scheduler is stopped), so what the tests compare stays still."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import text

from parley.conversations.agent_conversations import send_from_run
from parley.conversations.model import Role, TaskStatus
from parley.conversations.model import Topic as StoredTopic
from parley.conversations.person import delete_conversation, say
from parley.conversations.tasks import create_task, delete_task, end_task, spawn_subtask
from parley.errors import Conflict
from parley.people.accounts import add_person
from parley.people.model import Person
from parley.people.model import Role as PersonRole
from parley.runs.model import Run as StoredRun
from parley.runs.model import RunState
from parley.startup import hop_budget
from parley.store import Tx
from tests.reads.model import AGENT_CONVERSATION, CONVERSATION, TASK, Reader, Run, Topic, World
from tests.support import Harness, eventually

T = TypeVar("T")

AGENTS = ("w0", "w1", "w2")
KINDS = ("converse", "task", "send", "spawn", "delete", "end", "finish")


@dataclass(frozen=True)
class Step:
    kind: str  # one of KINDS
    first: int  # which reader, topic or run (modulo how many there are)
    second: int  # which agent, run or ending


async def hire_idle_agents(parley: Harness) -> None:
    """Agents that take work but never run it: active, on the local node, with no workspace;
    and the scheduler stopped. Having no workspace is not enough: when the local node registers
    again (a heartbeat late on a busy machine), the runtime provisions agents awaiting one, and
    their queued runs would start while a test reads them."""
    await parley.context.runtime.scheduler.stop()
    async with parley.context.store.transaction() as tx:
        node = await tx.nodes.by_name("local")
        assert node is not None
        for name in AGENTS:
            await tx.agents.insert(
                name=name,
                node_id=node.id,
                lifecycle="active",
                brain="offline",
                max_sessions=1,
                created_at=parley.clock.now(),
            )


class Builder:
    def __init__(self, parley: Harness, world: World) -> None:
        self.parley, self.world = parley, world
        self.people: dict[int, Person] = {}
        self.budget = hop_budget(parley.context.settings)

    async def owner(self) -> Reader:
        """The installation's first owner, as a reader of the world."""
        async with self.parley.context.store.transaction() as tx:
            person = await tx.people.by_name("owner")
        assert person is not None
        self.people[person.id] = person
        token = self.parley.owner.headers["Authorization"].removeprefix("Bearer ")
        reader = Reader(person.id, person.name, True, token)
        self.world.readers.append(reader)
        return reader

    async def add_reader(self, is_owner: bool) -> Reader:
        name = f"p{len(self.world.readers)}"
        role = PersonRole.OWNER if is_owner else PersonRole.MEMBER
        async with self.parley.context.store.transaction() as tx:
            created = await add_person(tx, self.parley.clock, name, role)
        self.people[created.person.id] = created.person
        reader = Reader(created.person.id, name, is_owner, created.token)
        self.world.readers.append(reader)
        return reader

    async def run(self, step: Step) -> None:
        """One step in its own transaction; a step the library refuses (a Conflict) changes
        nothing and is left out of the model."""
        try:
            async with self.parley.context.store.transaction() as tx:
                await getattr(self, f"_{step.kind}")(tx, step)
        except Conflict:
            pass
        await self.refresh()

    async def settle(self) -> None:
        """Wait for the outbox worker (a deleted subtask's ending goes to its spawner), then
        take the runs and messages as they are."""
        assert await eventually(self._nothing_pending)
        await self.refresh()

    async def _nothing_pending(self) -> bool:
        async with self.parley.context.store.transaction() as tx:
            return await tx.outbox.next_due() is None

    async def refresh(self) -> None:
        """Runs and messages as the store has them: their states and order are not the rule
        under test; which topic they are in is."""
        async with self.parley.context.store.transaction() as tx:
            runs = await tx.connection.execute(
                text(
                    "SELECT runs.id AS id, topic_id, agents.name AS agent, state FROM runs"
                    " JOIN agents ON agents.id = runs.agent_id"
                )
            )
            self.world.runs = {r.id: Run(r.id, r.topic_id, r.agent, r.state) for r in runs}
            messages = await tx.connection.execute(
                text("SELECT id, topic_id FROM messages ORDER BY id")
            )
            self.world.messages = {}
            for message in messages:
                self.world.messages.setdefault(message.topic_id, []).append(message.id)
            stored = await tx.connection.execute(text("SELECT id FROM topics"))
            assert {row.id for row in stored} == set(self.world.topics)

    # steps

    async def _converse(self, tx: Tx, step: Step) -> None:
        reader = self._pick(self.world.readers, step.first)
        agent = AGENTS[step.second % len(AGENTS)]
        queued = await say(tx, self.parley.clock, self.people[reader.id], agent, "hello")
        if queued.topic_id not in self.world.topics:
            self._add(Topic(queued.topic_id, CONVERSATION, agent, reader.id, queued.topic_id))

    async def _task(self, tx: Tx, step: Step) -> None:
        reader = self._pick(self.world.readers, step.first)
        agent = AGENTS[step.second % len(AGENTS)]
        task, _ = await create_task(tx, self.parley.clock, self.people[reader.id], agent, "work")
        self._add(Topic(task.id, TASK, agent, None, task.id))

    async def _send(self, tx: Tx, step: Step) -> None:
        found = await self._open_run(tx, step)
        if found is None:
            return
        run, topic = found
        to = self._other_agent(run.agent_name, step.second)
        sender = Role(run.agent_id, run.agent_name)
        sent = await send_from_run(
            tx, self.parley.clock, self.budget, run, sender, topic, to, "question"
        )
        made = sent.conversation
        if made.id not in self.world.topics:
            roles = frozenset((run.agent_name, to))
            self._add(
                Topic(
                    made.id,
                    AGENT_CONVERSATION,
                    made.agent_name,
                    None,
                    made.root_id,
                    roles=roles,
                    thread_id=made.thread_id,
                )
            )

    async def _spawn(self, tx: Tx, step: Step) -> None:
        found = await self._open_run(tx, step)
        if found is None:
            return
        run, topic = found
        agent = self._other_agent(run.agent_name, step.second)
        subtask = await spawn_subtask(
            tx, self.parley.clock, self.budget, run, topic, agent, "part", False
        )
        self._add(Topic(subtask.id, TASK, agent, None, subtask.id, parent_id=topic.id))

    async def _delete(self, tx: Tx, step: Step) -> None:
        roots = [t for t in self.world.topics.values() if t.root_id == t.id and not t.deleted]
        if not roots:
            return
        chosen = self._pick(roots, step.first)
        if chosen.kind == CONVERSATION:
            assert chosen.person_id is not None
            person = self.people[chosen.person_id]
            await delete_conversation(tx, self.parley.clock, person, chosen.agent)
        else:
            task = await tx.topics.by_id(chosen.id)
            assert task is not None
            owner = next(p for p in self.people.values() if p.is_owner)
            await delete_task(tx, self.parley.clock, task, owner)
            if chosen.status == "open":
                chosen.status = TaskStatus.CANCELLED.value
        chosen.deleted = True

    async def _end(self, tx: Tx, step: Step) -> None:
        """End a task given by a person (a subtask's ending would be delivered to its spawner
        by the outbox worker, in the background)."""
        open_tasks = [
            t
            for t in self.world.topics.values()
            if t.kind == TASK and t.status == "open" and t.parent_id is None and not t.deleted
        ]
        if not open_tasks:
            return
        chosen = self._pick(open_tasks, step.first)
        status = (TaskStatus.DONE, TaskStatus.FAILED)[step.second % 2]
        task = await tx.topics.by_id(chosen.id)
        assert task is not None
        owner = next(p for p in self.people.values() if p.is_owner)
        await end_task(tx, self.parley.clock, task, status, "ended", owner)
        chosen.status = status.value

    async def _finish(self, tx: Tx, step: Step) -> None:
        if not self.world.runs:
            return
        run = self._pick(sorted(self.world.runs.values(), key=lambda r: r.id), step.first)
        ending = (RunState.FINISHED, RunState.FAILED, RunState.STOPPED)[step.second % 3]
        await tx.runs.finish(run.id, ending, self.parley.clock.now())

    # helpers

    async def _open_run(self, tx: Tx, step: Step) -> tuple[StoredRun, StoredTopic] | None:
        """A run in a topic whose root is not deleted (only such runs act), and its topic."""
        candidates = sorted(
            (r for r in self.world.runs.values() if not self._closed(r.topic_id)),
            key=lambda r: r.id,
        )
        if not candidates:
            return None
        chosen = self._pick(candidates, step.first)
        run = await tx.runs.by_id(chosen.id)
        topic = await tx.topics.by_id(chosen.topic_id)
        assert run is not None and topic is not None
        return run, topic

    def _closed(self, topic_id: int) -> bool:
        return self.world.closed(self.world.topics[topic_id])

    def _add(self, topic: Topic) -> None:
        self.world.topics[topic.id] = topic

    @staticmethod
    def _other_agent(name: str, index: int) -> str:
        others = [agent for agent in AGENTS if agent != name]
        return others[index % len(others)]

    @staticmethod
    def _pick(choices: list[T], index: int) -> T:
        return choices[index % len(choices)]
