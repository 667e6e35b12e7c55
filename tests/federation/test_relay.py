"""Agents of different installations talking (issue 10, point 4): a person asks agent A on
installation one; A asks B@two; B asks its local agent C; C answers B in the same thread, B
answers A in A's thread, and A reports to the person. Real servers, separate stores, scripted
brains; each installation sees only its own side's roots."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.federation.peers import (
    Installation,
    agent_conversations,
    connect,
    hire_scripted,
    installations,
    messages,
    wait_for,
)

ASKER = """
rules:
  - when: {text: "(?i)^ask (?P<question>.+)"}
    do:
      - send: {to: "broker@two", text: "{question}"}
      - reply: "I asked broker@two."
  - when: {from: "broker@two"}
    do:
      - report: "broker@two says: {text}"
"""
BROKER = """
rules:
  - when: {from: "asker@one"}
    do:
      - send: {to: clerk, text: "{text}"}
  - when: {from: clerk}
    do:
      - send: {to: "asker@one", text: "the clerk says {text}"}
"""
CLERK = """
otherwise:
  - reply: "42 spoons for {sender}"
"""


def _conversation_with(at: Installation, agent: str, token: str) -> dict[str, Any]:
    return dict(at.get(f"/conversations/{agent}", token)["topic"])


def _roles_shown(at: Installation, thread_id: str, *command: str, token: str | None = None) -> Any:
    """The sender and agent columns of the row of ``thread_id`` in a command's table."""
    shown = at.served.run(*command, token=token, env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    (row,) = [line for line in shown.output.splitlines() if line.startswith(thread_id)]
    return tuple(row.split()[1:3])


def test_a_question_is_relayed_across_installations_and_answered_back(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        connect(one, two)
        hire_scripted(one, "asker", ASKER, tmp_path)
        hire_scripted(two, "broker", BROKER, tmp_path)
        hire_scripted(two, "clerk", CLERK, tmp_path)
        two.ok("connection", "expose", "one", "broker")
        ada = one.api("POST", "/api/v1/people", json={"name": "ada", "role": "member"})
        ada_token = ada.json()["token"]
        said = one.cli("say", "asker", "ask how many spoons?", token=ada_token)
        assert said.exit_code == 0, said.output
        root = _conversation_with(one, "asker", ada_token)

        def reported() -> bool:
            return any(m["kind"] == "report" for m in messages(one, root["id"], ada_token))

        wait_for(reported)
        report = [m for m in messages(one, root["id"], ada_token) if m["kind"] == "report"]
        assert [m["body"] for m in report] == [
            "broker@two says: the clerk says 42 spoons for broker"
        ]

        # One: its side of the thread is rooted in ada's conversation: asker asked broker@two.
        (at_one,) = agent_conversations(one, ada_token)
        assert (at_one["sender"], at_one["agent"]) == ("asker", "broker@two")
        assert at_one["root_id"] == root["id"]
        assert at_one["root"] == "ada's conversation with asker"
        # Two: the peer's thread is its own root; the broker's relay to the clerk is rooted in
        # it, so the clerk's answer came back down the same chain.
        at_two = {c["agent"]: c for c in agent_conversations(two)}
        peer_started, relay = at_two["broker"], at_two["clerk"]
        assert (peer_started["sender"], peer_started["agent"]) == ("asker@one", "broker")
        assert peer_started["thread_id"] == at_one["thread_id"]
        assert peer_started["root_id"] == peer_started["id"]
        assert relay["root_id"] == peer_started["id"] and relay["sender"] == "broker"
        # Every surface of both installations shows the thread as asker asking broker, each
        # side naming the other's role with its connection (issue 30, point 4).
        thread = at_one["thread_id"]
        listing = ("agent-conversation", "list")
        assert _roles_shown(one, thread, *listing, token=ada_token) == ("asker", "broker@two")
        shown = ("conversation", "show", "asker")
        assert _roles_shown(one, thread, *shown, token=ada_token) == ("asker", "broker@two")
        assert _roles_shown(two, thread, *listing) == ("asker@one", "broker")
        # Nothing about one's root crossed: not ada, not her conversation, not its id there.
        everything_at_two = json.dumps(
            [two.get(f"/agent-conversations/{c['thread_id']}") for c in at_two.values()]
        )
        # As a word: a thread id is random hex, which may hold "ada" (a, d, a).
        assert not re.search(r"\bada\b", everything_at_two)
        assert "how many spoons?" in everything_at_two  # what was sent did cross
        history = one.cli("agent", "history", "asker", "broker@two", "--json", token=ada_token)
        assert history.exit_code == 0 and "how many spoons?" in history.output
        # What one sent went once, in order: each side's frames delivered, none waiting.
        for side in (one, two):
            (link,) = side.get("/connections")["items"]
            assert link["queued"] == 0 and link["failures"] == 0


def start_three_way_relay(
    one: Installation, two: Installation, three: Installation, tmp_path: Path
) -> None:
    """asker@one asks broker@two, who relays to clerk@three; started by a person's say."""
    broker = BROKER.replace("to: clerk", 'to: "clerk@three"').replace(
        "from: clerk", 'from: "clerk@three"'
    )
    connect(one, two)
    connect(two, three)
    hire_scripted(one, "asker", ASKER, tmp_path)
    hire_scripted(two, "broker", broker, tmp_path)
    hire_scripted(three, "clerk", CLERK, tmp_path)
    two.ok("connection", "expose", "one", "broker")
    three.ok("connection", "expose", "two", "clerk")
    one.ok("say", "asker", "ask how many forks?")


def test_three_installations_relay_and_each_sees_only_its_own_roots(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two", "three"]) as (one, two, three):
        start_three_way_relay(one, two, three, tmp_path)
        root = _conversation_with(one, "asker", one.served.owner_token)

        def reported() -> bool:
            return any(m["kind"] == "report" for m in messages(one, root["id"]))

        wait_for(reported)
        report = [m["body"] for m in messages(one, root["id"]) if m["kind"] == "report"]
        assert report == ["broker@two says: the clerk says 42 spoons for broker@two"]
        (at_three,) = agent_conversations(three)
        assert at_three["sender"] == "broker@two"
        assert at_three["root_id"] == at_three["id"]  # two's root stays at two
        at_two = {c["agent"]: c for c in agent_conversations(two)}
        assert at_two["broker"]["root_id"] == at_two["broker"]["id"]
        (relay,) = [c for c in agent_conversations(two) if c["agent"] == "clerk@three"]
        assert relay["sender"] == "broker"
        assert relay["root_id"] == at_two["broker"]["id"]
