"""Pause, unpause and revoke (issue 10, point 7), by the owners' CLI between real servers with
separate stores: what stops, what fails and who is told, what the peer's text meets, and that
unpausing restarts nothing while a revoke is for good on both sides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.federation.peers import (
    LISTENER,
    ComesAndGoes,
    Installation,
    agent_conversations,
    connect,
    frames,
    handshake_as_peer,
    hire_scripted,
    installations,
    messages,
    only_connection,
    sender_and_listener,
    texts_received,
    wait_for,
)

SENDER = """
rules:
  - when: {text: "(?i)^tell (?P<who>[a-z-]+)@(?P<where>[a-z-]+) (?P<what>.+)"}
    do:
      - send: {to: "{who}@{where}", text: "{what}"}
otherwise: []
"""
DOZER = """
otherwise:
  - sleep: 600
"""


def _notices(at: Installation, topic_id: int) -> list[str]:
    return [m["body"] for m in messages(at, topic_id) if m["kind"] == "notice"]


def _root_notices(at: Installation, agent: str) -> list[str]:
    """The notices in the owner's conversation with ``agent``, oldest first."""
    detail = at.get(f"/conversations/{agent}")
    return [m["body"] for m in reversed(detail["messages"]["items"]) if m["kind"] == "notice"]


def _runs(at: Installation, agent: str) -> list[dict[str, Any]]:
    return list(at.get(f"/runs?agent={agent}")["items"])


def _settled(at: Installation) -> bool:
    return all(f["state"] != "pending" for f in frames(at))


def test_a_paused_side_refuses_the_peers_text_and_unpausing_restarts_nothing(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        connect(one, two)
        hire_scripted(one, "sender", SENDER, tmp_path)
        hire_scripted(two, "listener", LISTENER, tmp_path)
        hire_scripted(two, "dozer", DOZER, tmp_path)
        hire_scripted(two, "talker", SENDER, tmp_path)
        two.ok("connection", "expose", "one", "listener", "dozer")
        one.ok("say", "sender", "tell listener@two hi")
        one.ok("say", "sender", "tell dozer@two wake up")
        wait_for(lambda: any(r["state"] == "running" for r in _runs(two, "dozer")))

        paused = json.loads(two.ok("connection", "pause", "one", "--json"))
        assert paused["state"] == "paused"
        # Every run of its conversations is stopped, and unpausing does not start it again.
        (dozing,) = _runs(two, "dozer")
        assert dozing["state"] == "stopped"
        # Roles here cannot send on it, with a clear error to the sending run.
        said = two.cli("say", "talker", "tell sender@one hello")
        assert said.exit_code == 7, said.output
        assert "the connection one is paused" in said.output

        # The peer's text is refused as 'paused': the peer fails it and tells its sender.
        one.ok("say", "sender", "tell listener@two are you there?")
        wait_for(lambda: _settled(one))
        refused = frames(one)[-1]
        assert refused["state"] == "failed"
        # Worded from one's side: two paused it, not "this side".
        assert refused["last_error"] == "paused: two paused the connection: the text was not taken"
        (thread,) = [c for c in agent_conversations(one) if c["agent"] == "listener@two"]
        assert _notices(one, thread["id"]) == [
            f"Your text to listener@two was refused: {refused['last_error']}"
        ]
        # And the person who asked reads it in their conversation, where the reply said "sent".
        assert _root_notices(one, "sender") == [
            "sender's text to listener@two ('are you there?') was not delivered:"
            f" {refused['last_error']}"
        ]
        assert sorted(texts_received(two)) == ["hi", "wake up"]

        unpaused = json.loads(two.ok("connection", "unpause", "one", "--json"))
        assert unpaused["state"] == "active"
        assert [r["state"] for r in _runs(two, "dozer")] == ["stopped"]
        # Once unpaused, two tells one of the text it had taken and dropped; waited for, so
        # that it does not land in the next turn's `say` (which shows what is told meanwhile).
        dropped = (
            "1 text from sender to dozer@two taken there, dropped unanswered:"
            " paused: two paused the connection"
        )
        wait_for(lambda: dropped in _root_notices(one, "sender"))
        # The refusal used its seq: the same thread goes on, with nothing lost in between.
        one.ok("say", "sender", "tell listener@two back again")
        wait_for(lambda: frames(one)[-1]["state"] == "delivered")
        assert sorted(texts_received(two)) == ["back again", "hi", "wake up"]
        assert thread["closed_reason"] is None
        assert len([c for c in agent_conversations(two) if c["agent"] == "listener"]) == 1


def test_pausing_fails_the_text_waiting_to_be_sent_with_a_notice_to_its_sender(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls[:1], ["one"]) as (one,):
        handshake_as_peer(one, "far")  # a peer whose URL nothing answers: frames wait
        hire_scripted(one, "sender", SENDER, tmp_path)
        one.ok("say", "sender", "tell listener@far first")
        one.ok("say", "sender", "tell listener@far second")
        wait_for(lambda: only_connection(one)["failures"] >= 1)
        assert only_connection(one)["queued"] == 2

        one.ok("connection", "pause", "far")
        link = only_connection(one)
        assert (link["state"], link["queued"]) == ("paused", 0)
        failed = frames(one)
        assert [f["state"] for f in failed] == ["failed", "failed"]
        reason = "paused: the connection to far was paused here"
        assert {f["last_error"] for f in failed} == {reason}
        (thread,) = agent_conversations(one)
        assert (
            _notices(one, thread["id"]) == [f"Your text to listener@far was refused: {reason}"] * 2
        )
        # Its seq has a gap now: our side is closed, so a later send opens a new thread.
        assert thread["closed_reason"] == f"not sent: {reason}"
        said = one.cli("say", "sender", "tell listener@far third")
        assert said.exit_code == 7 and "the connection far is paused" in said.output

        one.ok("connection", "unpause", "far")
        one.ok("say", "sender", "tell listener@far fourth")
        threads = agent_conversations(one)
        assert len({c["thread_id"] for c in threads}) == 2


def test_a_revoke_is_for_good_on_both_sides_at_the_next_contact(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        sender_and_listener(one, two, SENDER, tmp_path)
        one.ok("say", "sender", "tell listener@two hi")
        wait_for(lambda: frames(one)[-1]["state"] == "delivered")

        revoked = json.loads(two.ok("connection", "revoke", "one", "--json"))
        assert revoked["state"] == "revoked"
        for verb in ("unpause", "pause"):
            refused = two.cli("connection", verb, "one")
            assert refused.exit_code != 0
            assert "the connection one is revoked for good" in refused.output
        (closed,) = agent_conversations(two)
        revoked_here = "revoked: the connection to one was revoked here, for good"
        assert closed["closed_reason"] == revoked_here

        # One learns it at its next contact: its token is refused, so its side is revoked too.
        one.ok("say", "sender", "tell listener@two still there?")
        wait_for(lambda: only_connection(one)["state"] == "revoked")
        wait_for(lambda: _settled(one))
        lost = frames(one)[-1]
        assert lost["state"] == "failed"
        assert lost["last_error"] == "revoked: two revoked the connection, for good"
        (thread,) = agent_conversations(one)
        assert thread["closed_reason"] == f"not sent: {lost['last_error']}"
        assert _notices(one, thread["id"]) == [
            f"Your text to listener@two was refused: {lost['last_error']}"
        ]
        said = one.cli("say", "sender", "tell listener@two again")
        assert said.exit_code == 7 and "the connection two is revoked" in said.output
        assert texts_received(two) == ["hi"]


def test_a_close_waiting_when_the_connection_is_paused_goes_after_unpause(
    tmp_path: Path, store_urls: list[str]
) -> None:
    peer = ComesAndGoes("two", tmp_path, store_urls[1])
    with installations(tmp_path, store_urls[:1], ["one"]) as (one,):
        with peer.up() as two:
            sender_and_listener(one, two, SENDER, tmp_path)
            one.ok("say", "sender", "tell listener@two hi")
            wait_for(lambda: _settled(one))
        # Two is away: deleting the root puts a close that waits, and then one pauses.
        one.ok("conversation", "delete", "sender")
        wait_for(lambda: only_connection(one)["failures"] >= 1)
        one.ok("connection", "pause", "two")
        close = frames(one)[-1]
        assert close["state"] == "pending"
        assert "paused" not in (close["last_error"] or "")
        one.ok("connection", "unpause", "two")
        with peer.up() as two:
            wait_for(lambda: _settled(one))
            assert [f["state"] for f in frames(one)] == ["delivered", "delivered"]
            (thread,) = agent_conversations(two)
            assert thread["closed_reason"] == "closed by one: its root was deleted"
