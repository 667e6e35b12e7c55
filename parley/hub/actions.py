"""What a run may do, as ``parley.actions.table`` defines it: each action acts for
the run behind a run token; the topic, and so the root, comes from that run alone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from parley.actions.arguments import action_named, bind
from parley.actions.table import AGENT_TOOLS, NODE_SESSION_TOOLS
from parley.agents.memory import check_note
from parley.agents.model import Agent
from parley.clock import Clock
from parley.conversations.agent_conversations import send_from_run
from parley.conversations.hops import acting_under_root
from parley.conversations.model import LOCAL, HopBudget, Role, TaskStatus, Topic, TopicKind
from parley.conversations.node_exchange import ask_node_from_run
from parley.conversations.peer_conversations import send_to_peer
from parley.conversations.tasks import end_task, spawn_subtask
from parley.errors import Conflict, Forbidden, Invalid, Unauthorized
from parley.runs.model import Run
from parley.runs.queueing import check_text
from parley.store import Tx
from parley.text import MAX_TEXT, check_length
from parley.tokens import RUN_TOKEN_PREFIX, hash_token


@dataclass(frozen=True)
class Acted:
    """What an action did: a short confirmation (an LLM sees it as the tool's result), and the
    ids of what it made or reached, for a program that goes on from them (``parley act --json``)."""

    result: str
    # The topic it posted or queued in (a send's agent conversation, a report's root, …).
    topic_id: int | None = None
    # A send's agent conversation, by its thread ID.
    thread_id: str | None = None
    # The subtask a spawn made, or the task a complete ended.
    task_id: int | None = None
    # The run that will read what was sent or asked (it may have been waiting already).
    run_id: int | None = None


async def running_run(tx: Tx, token: str | None) -> Run:
    """The running run a token belongs to: its token is its whole authority, valid only while it
    runs; without one there is no topic to act in."""
    if not token or not token.startswith(RUN_TOKEN_PREFIX):
        raise Unauthorized(
            "a role token without a run has no topic: actions need the PARLEY_RUN_TOKEN of a"
            " running turn"
        )
    run = await tx.runs.running_by_token_hash(hash_token(token))
    if run is None:
        raise Unauthorized("this run token belongs to no running turn (it ended or was stopped)")
    return run


def tools_of(agent: Agent) -> tuple[str, ...]:
    """What a run of ``agent`` may do: Parley's actions (a node session's list is narrower than
    a hired agent's), then the workspace tools its own list names."""
    return _actions_of(agent.is_node_session) + agent.tools


def _actions_of(node_session: bool) -> tuple[str, ...]:
    return NODE_SESSION_TOOLS if node_session else AGENT_TOOLS


class RunActing:
    """The actions of one run, inside one transaction: a method per action of the table, each
    reached through ``act``, which checks the arguments against the table first."""

    def __init__(self, tx: Tx, clock: Clock, budget: HopBudget, run: Run, topic: Topic) -> None:
        self.tx, self.clock, self.run, self.topic = tx, clock, run, topic
        self.budget = budget  # of what the run sets off (sends, subtasks, node questions)
        self.agent = Role(run.agent_id, run.agent_name)

    @classmethod
    async def for_token(
        cls, tx: Tx, clock: Clock, budget: HopBudget, token: str | None
    ) -> RunActing:
        run = await running_run(tx, token)
        topic = await tx.topics.by_id(run.topic_id)
        assert topic is not None
        await acting_under_root(tx, run, topic)  # so that a stop of its root reaches it
        return cls(tx, clock, budget, run, topic)

    async def act(self, name: str, arguments: Mapping[str, object]) -> Acted:
        """Do the action ``name`` with ``arguments``, once the table and the run allow it."""
        if action_named(name).in_workspace:
            raise Forbidden(
                f"{name} acts in {self.run.agent_name}'s workspace, on its node, during its turn:"
                " a model brain calls it as a tool there; a command brain has its own"
            )
        if name not in _actions_of(self.run.by_node_session):
            allowed = ", ".join(_actions_of(True))
            raise Forbidden(f"{self.run.agent_name} is a node session; it may only {allowed}")
        do: Callable[..., Awaitable[Acted]] = getattr(self, name)
        return await do(**bind(name, arguments))

    async def send(self, to: str, text: str) -> Acted:
        name, _, connection = to.partition("@")
        if connection and connection != LOCAL:
            return await self._send_to_peer(name, connection, text)
        sent = await send_from_run(
            self.tx, self.clock, self.budget, self.run, self.agent, self.topic, to, text
        )
        thread = sent.conversation.thread_id
        return Acted(
            f"sent to {to} (agent conversation {thread})",
            topic_id=sent.conversation.id,
            thread_id=thread,
            run_id=sent.queued.run_id,
        )

    async def _send_to_peer(self, name: str, connection: str, text: str) -> Acted:
        sent = await send_to_peer(
            self.tx,
            self.clock,
            self.budget,
            self.run,
            self.agent,
            self.topic,
            name,
            connection,
            text,
        )
        thread = sent.conversation.thread_id
        return Acted(
            f"sent to {name}@{connection} (agent conversation {thread}, seq {sent.seq})",
            topic_id=sent.conversation.id,
            thread_id=thread,
        )

    async def report(self, text: str) -> Acted:
        check_text(text)
        root = await self.tx.topics.by_id(self.topic.root_id)
        assert root is not None
        if root.is_closed:
            raise Conflict(f"where this work comes from was closed ({root.closed_reason})")
        await self.tx.messages.add(
            root.id,
            "report",
            text,
            self.clock.now(),
            author_agent_id=self.agent.id,
            from_run_id=self.run.id,
        )
        return Acted(f"reported on {describe(root)}", topic_id=root.id)

    async def spawn(self, agent: str, text: str, thread: bool = False) -> Acted:
        task = await spawn_subtask(
            self.tx, self.clock, self.budget, self.run, self.topic, agent, text, thread
        )
        return Acted(
            f"subtask {task.id} given to {task.agent_name}; its result will arrive as new text",
            topic_id=task.id,
            task_id=task.id,
        )

    async def complete(self, result: str, failed: bool = False) -> Acted:
        if self.topic.kind is not TopicKind.TASK:
            raise Invalid(f"complete ends a task; this run answers {describe(self.topic)}")
        check_length(result, MAX_TEXT, "result", may_be_empty=True)
        status = TaskStatus.FAILED if failed else TaskStatus.DONE
        await end_task(self.tx, self.clock, self.topic, status, result, self.run)
        return Acted(
            f"task {self.topic.id} {status.value}", topic_id=self.topic.id, task_id=self.topic.id
        )

    async def remember(self, note: str) -> Acted:
        note = check_note(note)
        await self.tx.agents.add_memory(self.agent.id, note, None, self.clock.now(), self.run.id)
        return Acted("remembered")

    async def ask_node(self, node: str, text: str) -> Acted:
        queued = await ask_node_from_run(
            self.tx, self.clock, self.budget, self.run, self.topic, node, text
        )
        return Acted(
            f"asked node {node}; its answer will arrive as new text",
            topic_id=queued.topic_id,
            run_id=queued.run_id,
        )


def describe(topic: Topic) -> str:
    """A topic in words, as a run is told what it answers for."""
    if topic.kind is TopicKind.CONVERSATION:
        return f"{topic.person_name}'s conversation with {topic.agent_name}"
    if topic.kind is TopicKind.TASK:
        return f"task {topic.id} ({_short(topic.text or '')})"
    if topic.kind is TopicKind.NODE:
        return f"questions to {topic.agent_name}"
    return f"agent conversation {topic.thread_id} between {topic.started_by} and {topic.asked}"


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
