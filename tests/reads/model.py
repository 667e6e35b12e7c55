"""A small pure model of who reads what, kept by the tests from what they built:
the rule in a few lines of Python, and every list and single read of the API in its terms."""

from __future__ import annotations

from dataclasses import dataclass, field

CONVERSATION, TASK, AGENT_CONVERSATION = "conversation", "task", "agent_conversation"


@dataclass
class Reader:
    id: int
    name: str
    is_owner: bool
    token: str


@dataclass
class Topic:
    id: int
    kind: str
    agent: str  # the agent working in it (for an agent conversation: the role first written to)
    person_id: int | None  # a conversation's person
    root_id: int  # the topic itself, unless it is an agent conversation
    status: str = "open"
    parent_id: int | None = None  # a subtask's: the topic whose run spawned it
    roles: frozenset[str] = frozenset()  # an agent conversation's two roles
    thread_id: str | None = None
    deleted: bool = False  # deleting a root marks it; what is rooted in it closes with it


@dataclass
class Run:
    id: int
    topic_id: int
    agent: str
    state: str


@dataclass
class World:
    readers: list[Reader] = field(default_factory=list)
    topics: dict[int, Topic] = field(default_factory=dict)
    runs: dict[int, Run] = field(default_factory=dict)
    messages: dict[int, list[int]] = field(default_factory=dict)  # per topic, oldest first

    def closed(self, topic: Topic) -> bool:
        return self.topics[topic.root_id].deleted

    def may_read(self, reader: Reader, topic: Topic) -> bool:
        """The rule: a deleted root and all rooted in it → owners; a person's conversation →
        that person alone; anything else → every person."""
        root = self.topics[topic.root_id]
        if root.deleted:
            return reader.is_owner
        if root.kind == CONVERSATION:
            return root.person_id == reader.id
        return True

    # the lists, newest first

    def conversations(self, reader: Reader, deleted: bool) -> list[int]:
        return self._topics(reader, CONVERSATION, deleted)

    def tasks(
        self, reader: Reader, status: str | None, deleted: bool, parent: int | None
    ) -> list[int] | None:
        """None: the parent is not readable (404)."""
        if parent is not None and not self.may_read(reader, self.topics[parent]):
            return None
        return [
            id
            for id in self._topics(reader, TASK, deleted)
            if status in (None, self.topics[id].status)
            and (parent is None or self.topics[id].parent_id == parent)
        ]

    def agent_conversations(
        self, reader: Reader, include_closed: bool, root: int | None = None
    ) -> list[int] | None:
        if root is not None and not self.may_read(reader, self.topics[root]):
            return None
        return [
            id
            for id in self._topics(reader, AGENT_CONVERSATION, include_closed)
            if root is None or (self.topics[id].root_id == root and id != root)
        ]

    def history(self, reader: Reader, role: str, peer: str) -> list[int]:
        return [
            id
            for id in self._topics(reader, AGENT_CONVERSATION, True)
            if self.topics[id].roles == frozenset((role, peer))
        ]

    def runs_of(
        self,
        reader: Reader,
        agent: str | None = None,
        states: tuple[str, ...] = (),
        topic: int | None = None,
    ) -> list[int] | None:
        if topic is not None and not self.may_read(reader, self.topics[topic]):
            return None
        return sorted(
            (
                run.id
                for run in self.runs.values()
                if self.may_read(reader, self.topics[run.topic_id])
                and agent in (None, run.agent)
                and (not states or run.state in states)
                and topic in (None, run.topic_id)
            ),
            reverse=True,
        )

    def messages_of(self, reader: Reader, topic_id: int) -> list[int] | None:
        if not self.may_read(reader, self.topics[topic_id]):
            return None
        return list(reversed(self.messages.get(topic_id, [])))

    def open_conversation(self, reader: Reader, agent: str) -> int | None:
        found = [
            t.id
            for t in self.topics.values()
            if t.kind == CONVERSATION
            and t.person_id == reader.id
            and t.agent == agent
            and not t.deleted
        ]
        assert len(found) <= 1
        return found[0] if found else None

    def _topics(self, reader: Reader, kind: str, include_closed: bool) -> list[int]:
        return sorted(
            (
                t.id
                for t in self.topics.values()
                if t.kind == kind
                and self.may_read(reader, t)
                and (include_closed or not self.closed(t))
            ),
            reverse=True,
        )
