"""The queue limit (issue 10, point 5), each way: past it a send on the connection fails at once
with queue_full, and the receiver refuses the peer's text as queue_full while that much waits
for its agents. Set per connection by the owner's CLI; the setting's default otherwise."""

from __future__ import annotations

import json
from pathlib import Path

from tests.federation.peers import (
    agent_conversations,
    connect,
    frames,
    handshake_as_peer,
    hire_scripted,
    installations,
    messages,
    wait_for,
)
from tests.federation.test_pause import DOZER, SENDER


def test_a_send_past_the_connections_limit_fails_at_once_with_queue_full(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls[:1], ["one"]) as (one,):
        handshake_as_peer(one, "far")  # nothing answers there: what is sent waits
        hire_scripted(one, "sender", SENDER, tmp_path)
        limited = json.loads(one.ok("connection", "limit", "far", "2", "--json"))
        assert limited["queue_limit"] == 2
        one.ok("say", "sender", "tell listener@far one")
        one.ok("say", "sender", "tell other@far two")  # the limit counts every thread
        said = one.cli("say", "sender", "tell listener@far three")
        assert said.exit_code == 7, said.output
        assert "queue_full: 2 texts wait to be sent to far" in said.output
        assert len(frames(one)) == 2
        refused = one.cli("connection", "limit", "far", "0")
        assert refused.exit_code != 0
        # Back to the setting's default (1000): the send goes into the queue.
        default = json.loads(one.ok("connection", "limit", "far", "--json"))
        assert default["queue_limit"] is None
        one.ok("say", "sender", "tell listener@far three")
        assert len(frames(one)) == 3


def test_the_receiver_refuses_text_as_queue_full_while_its_backlog_is_full(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        connect(one, two)
        hire_scripted(one, "sender", SENDER, tmp_path)
        hire_scripted(two, "dozer", DOZER, tmp_path)
        two.ok("connection", "expose", "one", "dozer")
        two.ok("connection", "limit", "one", "2")
        one.ok("say", "sender", "tell dozer@two first")
        # The first text is being taken up (its run runs); the next two wait for dozer.
        wait_for(lambda: any(r["state"] == "running" for r in two.get("/runs")["items"]))
        for text in ("second", "third", "fourth"):
            one.ok("say", "sender", f"tell dozer@two {text}")
        wait_for(lambda: all(f["state"] != "pending" for f in frames(one)))
        states = [(f["state"], (f["last_error"] or "")[:11]) for f in frames(one)]
        assert states == [("delivered", "")] * 3 + [("failed", "queue_full:")]
        (thread,) = agent_conversations(one)
        notices = [m["body"] for m in messages(one, thread["id"]) if m["kind"] == "notice"]
        assert len(notices) == 1 and "queue_full" in notices[0]
        assert thread["closed_reason"] is None  # its seq was used: the thread goes on
        (at_two,) = agent_conversations(two)
        texts = [m["body"] for m in messages(two, at_two["id"]) if m["kind"] == "text"]
        assert texts == ["first", "second", "third"]
