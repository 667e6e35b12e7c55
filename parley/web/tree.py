"""The agent conversations rooted in one topic, drawn as who asked whom: a conversation hangs
under the one whose recipient sent it (B→C under A→B), the top level being those the root's own
agent sent. Pure: it arranges topics already read, as far as the reader may read them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from parley.conversations.model import Topic


@dataclass
class Node:
    topic: Topic
    children: list[Node] = field(default_factory=list)

    @property
    def sender(self) -> str:
        return sender_of(self.topic)

    @property
    def recipient(self) -> str:
        return self.topic.asked or "?"


def sender_of(topic: Topic) -> str:
    return topic.started_by or "?"


def build_tree(root: Topic, conversations: Sequence[Topic]) -> list[Node]:
    """The conversations nested by who asked whom, oldest first at each level. Each is placed
    once (so a role asking back up the chain makes no cycle); one whose sender no placed
    conversation reaches is put at the top level, with whatever hangs under it."""
    waiting = sorted((t for t in conversations if t.id != root.id), key=lambda t: t.id)
    tops = [Node(t) for t in waiting if sender_of(t) == root.agent_name]
    placed = {node.topic.id for node in tops}
    _grow(tops, waiting, placed)
    while len(placed) < len(waiting):
        left = Node(next(t for t in waiting if t.id not in placed))
        placed.add(left.topic.id)
        tops.append(left)
        _grow([left], waiting, placed)
    return tops


def _grow(level: list[Node], waiting: list[Topic], placed: set[int]) -> None:
    """Breadth first: a conversation hangs under the shallowest one its sender received."""
    while level:
        below: list[Node] = []
        for node in level:
            for topic in waiting:
                if topic.id not in placed and sender_of(topic) == node.recipient:
                    child = Node(topic)
                    placed.add(topic.id)
                    node.children.append(child)
                    below.append(child)
        level = below


def walk(nodes: Sequence[Node]) -> Iterator[Node]:
    """Every node, depth first."""
    for node in nodes:
        yield node
        yield from walk(node.children)
