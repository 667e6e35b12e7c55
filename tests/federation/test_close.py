"""Lifetime over the wire (issue 10, point 6): deleting a root closes its agent conversations
and tells each peer (a ``close`` frame after the thread's text), which closes its side and what
is rooted there, telling its own peers in turn. Real servers, separate stores, the owners' CLI."""

from __future__ import annotations

from pathlib import Path

from tests.federation.peers import (
    Installation,
    agent_conversations,
    frames,
    installations,
    messages,
    wait_for,
)
from tests.federation.test_relay import start_three_way_relay

TOLD = "its root was deleted"


def _all_sent(at: Installation) -> bool:
    return all(f["state"] == "delivered" for f in frames(at))


def _closed(at: Installation) -> dict[str, str | None]:
    return {c["thread_id"]: c["closed_reason"] for c in agent_conversations(at)}


def test_deleting_a_root_closes_its_threads_on_every_installation_down_the_chain(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two", "three"]) as (one, two, three):
        start_three_way_relay(one, two, three, tmp_path)
        root = one.get("/conversations/asker")["topic"]
        wait_for(lambda: any(m["kind"] == "report" for m in messages(one, root["id"])))
        for side in (one, two, three):
            wait_for(lambda side=side: _all_sent(side))  # type: ignore[misc]
        texts_sent = {side.name: len(frames(side)) for side in (one, two, three)}

        one.ok("conversation", "delete", "asker")
        # One closes its thread and tells two; two closes that thread (its own root) and the
        # relay rooted in it, and tells three; three closes its side. Nothing is told back.
        (thread,) = agent_conversations(one)
        assert thread["closed_reason"] == "conversation deleted by owner"
        wait_for(lambda: all(_closed(three).values()))
        at_two = {c["agent"]: c for c in agent_conversations(two)}
        assert at_two["broker"]["closed_reason"] == f"closed by one: {TOLD}"
        assert at_two["clerk@three"]["closed_reason"] == f"closed by one: {TOLD}"
        (at_three,) = agent_conversations(three)
        assert at_three["closed_reason"] == f"closed by two: {TOLD}"
        for side in (one, two, three):
            wait_for(lambda side=side: _all_sent(side))  # type: ignore[misc]
        closes = {side.name: len(frames(side)) - texts_sent[side.name] for side in (one, two)}
        assert closes == {"one": 1, "two": 1}
        assert len(frames(three)) == texts_sent["three"]
        assert agent_conversations(one) == [thread]  # two's close of its relay was not sent

        # A new root opens a new thread, which two sees as one the peer started.
        one.ok("say", "asker", "ask how many knives?")
        wait_for(lambda: len(agent_conversations(two)) == 4)
        fresh = [c for c in agent_conversations(two) if c["closed_reason"] is None]
        started = [c for c in fresh if c["sender"] == "asker@one"]
        assert len(started) == 1 and started[0]["root_id"] == started[0]["id"]
        assert started[0]["thread_id"] != thread["thread_id"]
