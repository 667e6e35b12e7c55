"""The sending side: frames wait in the outbox until the peer answers — retried with backoff
while it is away, delivered once when it is back — and a refusal fails the frame for good with
a notice to the sending role. Real servers, separate stores."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.federation.fake_peer import FakePeerHandler, serving
from tests.federation.peers import (
    LISTENER,
    ComesAndGoes,
    agent_conversations,
    connect,
    frames,
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
  - when: {text: "(?i)^tell (?P<who>[a-z-]+) (?P<what>.+)"}
    do:
      - send: {to: "{who}@two", text: "{what}"}
otherwise: []
"""


def test_a_peer_away_is_retried_with_backoff_and_gets_the_text_once(
    tmp_path: Path, store_urls: list[str]
) -> None:
    peer = ComesAndGoes("two", tmp_path, store_urls[1])
    with installations(tmp_path, store_urls[:1], ["one"]) as (one,):
        with peer.up() as two:
            sender_and_listener(one, two, SENDER, tmp_path)
        # Two is away (its store stays): the frame waits, the connection shows why.
        one.ok("say", "sender", "tell listener are you there?")
        wait_for(lambda: only_connection(one)["failures"] >= 1)
        away = only_connection(one)
        assert away["queued"] == 1 and away["retry_at"] is not None
        assert "cannot reach the peer" in away["last_error"]
        (waiting,) = frames(one)
        assert waiting["state"] == "pending" and waiting["attempts"] >= 1
        listing = one.ok("connection", "list", "--json")
        assert "cannot reach the peer" in listing and '"failures": ' in listing
        with peer.up() as two:
            wait_for(lambda: frames(one)[0]["state"] == "delivered")
            back = only_connection(one)
            assert (back["queued"], back["failures"], back["retry_at"]) == (0, 0, None)
            assert back["last_contact_at"] is not None
            assert texts_received(two) == ["are you there?"]


def test_a_refused_frame_fails_for_good_with_a_notice_to_its_sender(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        connect(one, two)
        hire_scripted(one, "sender", SENDER, tmp_path)
        hire_scripted(two, "listener", LISTENER, tmp_path)  # not exposed
        one.ok("say", "sender", "tell listener hello")
        wait_for(lambda: frames(one)[0]["state"] == "failed")
        (failed,) = frames(one)
        assert failed["last_error"] == (
            "unknown_role: two has no agent listener that takes text from here"
        )
        (thread,) = agent_conversations(one)
        notices = [m["body"] for m in messages(one, thread["id"]) if m["kind"] == "notice"]
        assert notices == [f"Your text to listener@two was refused: {failed['last_error']}"]
        # The peer never opened that thread: our side is closed, so the next send opens another.
        assert thread["closed_reason"] == "refused by two: unknown_role"
        # The refusal starts no turn: the sender's only run is the one the person started.
        assert len(one.get("/runs?agent=sender")["items"]) == 1
        assert agent_conversations(two) == []
        # Exposed now, a new send gets through, in a new thread.
        two.ok("connection", "expose", "one", "listener")
        one.ok("say", "sender", "tell listener hello again")
        wait_for(lambda: any(f["state"] == "delivered" for f in frames(one)))
        assert texts_received(two) == ["hello again"]
        threads = [c["thread_id"] for c in agent_conversations(one)]
        assert len(set(threads)) == 2


def test_a_send_to_an_unknown_connection_or_a_bad_name_fails_the_turn(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one"]) as (one,):
        hire_scripted(one, "sender", SENDER.replace("@two", "@nowhere"), tmp_path)
        said = one.cli("say", "sender", "tell listener hello")
        assert said.exit_code == 7, said.output
        assert "no connection named 'nowhere'" in said.output
        assert frames(one) == []


class _RefusingEveryToken(FakePeerHandler):
    """What may stand at a peer's URL for a while (a proxy in front of it, or the peer restored
    from a backup older than our connection): it answers every batch 401, not saying revoked."""

    def do_POST(self) -> None:
        self.read_json()
        self.answer_json(401, {"error": "unauthorized", "message": "who are you?"})


def test_a_401_that_does_not_say_revoked_is_retried_and_revokes_nothing(
    tmp_path: Path, store_urls: list[str]
) -> None:
    peer = ComesAndGoes("two", tmp_path, store_urls[1])
    with installations(tmp_path, store_urls[:1], ["one"]) as (one,):
        with peer.up() as two:
            sender_and_listener(one, two, SENDER, tmp_path)
        with serving(_RefusingEveryToken, peer.port):
            one.ok("say", "sender", "tell listener still friends?")
            wait_for(lambda: only_connection(one)["failures"] >= 1)
            refused = only_connection(one)
            assert (refused["state"], refused["queued"]) == ("active", 1)
            assert "refused: who are you?" in refused["last_error"]
            (waiting,) = frames(one)
            assert waiting["state"] == "pending"
        with peer.up() as two:
            wait_for(lambda: frames(one)[0]["state"] == "delivered")
            assert only_connection(one)["state"] == "active"
            assert texts_received(two) == ["still friends?"]


def test_a_peer_missing_earlier_text_of_a_thread_gets_the_thread_again_from_there(
    tmp_path: Path, store_urls: list[str]
) -> None:
    """The peer was restored from a backup taken before our first text: our second is from the
    future there, so the thread goes again from the seq it expects, each text once, in order."""
    if not store_urls[1].startswith("sqlite"):
        pytest.skip("the peer's backup here is a copy of its SQLite file")
    peer_store = Path(store_urls[1].removeprefix("sqlite:///"))
    peer = ComesAndGoes("two", tmp_path, store_urls[1])
    with installations(tmp_path, store_urls[:1], ["one"]) as (one,):
        with peer.up() as two:
            sender_and_listener(one, two, SENDER, tmp_path)
        backup = _copy_store(peer_store, tmp_path / "backup")
        with peer.up():
            one.ok("say", "sender", "tell listener first")
            wait_for(lambda: frames(one)[0]["state"] == "delivered")
        _copy_store(backup / peer_store.name, peer_store.parent)
        with peer.up() as two:
            one.ok("say", "sender", "tell listener second")
            wait_for(lambda: [f["state"] for f in frames(one)] == ["delivered"] * 2)
            (thread,) = agent_conversations(two)
            assert [m["body"] for m in messages(two, thread["id"])] == ["first", "second"]
            (ours,) = agent_conversations(one)
            assert ours["closed_reason"] is None
            notices = [m for m in messages(one, ours["id"]) if m["kind"] == "notice"]
            assert notices == []


def _copy_store(store: Path, to: Path) -> Path:
    """The SQLite file ``store`` (with its WAL, if any) copied into the folder ``to``."""
    to.mkdir(exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        part = store.with_name(store.name + suffix)
        (to / part.name).unlink(missing_ok=True)
        if part.exists():
            shutil.copy2(part, to / part.name)
    return to
