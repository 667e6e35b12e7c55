"""The drawn tree of a root's agent conversations: who asked whom, nested, each placed once."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from parley.conversations.model import Topic, TopicKind
from parley.web.tree import Node, build_tree, walk

AT = datetime(2026, 11, 1, tzinfo=UTC)
ROOT = Topic(
    id=1, kind=TopicKind.CONVERSATION, agent_id=1, agent_name="a", addressed_name="a",
    person_id=1, person_name="ann", text=None, status="open", result=None,
    spawned_by_run_id=None, reply_agent_id=None, reply_topic_id=None, thread=False,
    connection=None, root_topic_id=None, sender_agent_id=None, sender_name=None,
    thread_id=None, created_at=AT, finished_at=None, closed_at=None, closed_reason=None,
)  # fmt: skip


def between(topic_id: int, sender: str, recipient: str) -> Topic:
    return replace(
        ROOT,
        id=topic_id,
        kind=TopicKind.AGENT_CONVERSATION,
        agent_name=recipient,
        sender_name=sender,
        connection="local",
        root_topic_id=ROOT.id,
        thread_id=f"t{topic_id}",
    )


def to_peer(topic_id: int, sender: str, peer: str, connection: str) -> Topic:
    return replace(between(topic_id, "", sender), sender_name=None, peer_role=peer,
                   connection=connection)  # fmt: skip


def shape(nodes: list[Node]) -> list[tuple[str, Any]]:
    return [(f"{n.sender}>{n.recipient}", shape(n.children)) for n in nodes]


def test_a_conversation_hangs_under_the_one_whose_recipient_sent_it() -> None:
    tree = build_tree(ROOT, [between(3, "b", "c"), between(2, "a", "b"), between(4, "c", "d")])
    assert shape(tree) == [("a>b", [("b>c", [("c>d", [])])])]


def test_the_top_level_is_what_the_root_s_agent_sent_oldest_first() -> None:
    tree = build_tree(ROOT, [between(5, "a", "c"), between(2, "a", "b"), between(6, "b", "x")])
    assert shape(tree) == [("a>b", [("b>x", [])]), ("a>c", [])]


def test_a_role_asking_back_up_the_chain_makes_no_cycle() -> None:
    conversations = [between(2, "a", "b"), between(3, "b", "a"), between(4, "b", "c")]
    tree = build_tree(ROOT, conversations)
    assert shape(tree) == [("a>b", [("b>a", []), ("b>c", [])])]
    assert sorted(n.topic.id for n in walk(tree)) == [2, 3, 4]  # each once


def test_a_cycle_that_the_root_s_agent_never_enters_is_still_shown_once() -> None:
    tree = build_tree(ROOT, [between(2, "x", "y"), between(3, "y", "x")])
    assert shape(tree) == [("x>y", [("y>x", [])])]


def test_what_no_one_placed_goes_to_the_top_level_with_what_hangs_under_it() -> None:
    tree = build_tree(ROOT, [between(2, "a", "b"), between(3, "q", "r"), between(4, "r", "s")])
    assert shape(tree) == [("a>b", []), ("q>r", [("r>s", [])])]


def test_a_peer_s_role_is_named_with_its_connection() -> None:
    sent = to_peer(2, "a", "scribe", "acme")
    assert (sent.started_by, sent.asked) == ("a", "scribe@acme")
    assert shape(build_tree(ROOT, [sent])) == [("a>scribe@acme", [])]


def test_a_conversation_a_peer_started_is_drawn_from_the_peer_s_role() -> None:
    started_here = to_peer(2, "a", "clerk", "acme")
    started_by_peer = replace(started_here, id=3, root_topic_id=3)  # its own root
    assert (started_by_peer.started_by, started_by_peer.asked) == ("clerk@acme", "a")
    assert shape(build_tree(ROOT, [started_here])) == [("a>clerk@acme", [])]


def test_the_root_itself_is_not_a_node_of_its_tree() -> None:
    started_by_peer = replace(to_peer(1, "a", "clerk", "acme"), root_topic_id=None)
    assert build_tree(started_by_peer, [started_by_peer, between(2, "a", "b")]) != []
    assert [n.topic.id for n in walk(build_tree(started_by_peer, [started_by_peer]))] == []


def test_no_conversations_is_an_empty_tree() -> None:
    assert build_tree(ROOT, []) == []
