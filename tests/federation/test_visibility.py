"""Who reads a conversation a peer started (its own root): every member; and a person who
reads it can stop its agent (the session is kept; text arriving later continues it)."""

from __future__ import annotations

from pathlib import Path

from tests.federation.peers import (
    agent_conversations,
    handshake_as_peer,
    hire_scripted,
    installations,
    messages,
    text_frame,
    wait_for,
)

HOST = """
rules:
  - when: {text: "(?i)^hold"}
    do:
      - sleep: 600
otherwise:
  - remember: "{sender} said {text}"
"""


def test_members_read_a_peer_started_conversation_and_stop_its_agent(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one"]) as (one,):
        token = handshake_as_peer(one)
        hire_scripted(one, "host", HOST, tmp_path)
        one.ok("connection", "expose", "peer", "host")
        member = one.api("POST", "/api/v1/people", json={"name": "bo", "role": "member"})
        bo = member.json()["token"]
        frame = text_frame("t1", 1, "m1", body="hold this for a while")
        answer = one.api("POST", "/federation/v1/frames", token, json={"frames": [frame]})
        assert answer.json()["verdicts"][0]["verdict"] == "accepted"

        (seen,) = agent_conversations(one, bo)
        assert (seen["thread_id"], seen["sender"]) == ("t1", "visitor@peer")
        shown = one.cli("agent-conversation", "show", "t1", token=bo)
        assert shown.exit_code == 0 and "hold this for a while" in shown.output
        assert [m["body"] for m in messages(one, seen["id"], bo)] == ["hold this for a while"]

        def running() -> bool:
            runs = one.get(f"/runs?topic={seen['id']}", bo)["items"]
            return bool(runs) and runs[0]["state"] == "running"

        wait_for(running)
        stopped = one.cli("agent-conversation", "stop", "t1", "--json", token=bo)
        assert stopped.exit_code == 0, stopped.output
        (run,) = one.get(f"/runs?topic={seen['id']}", bo)["items"]
        assert run["state"] == "stopped" and str(run["id"]) in stopped.output
        # Text arriving afterwards continues the conversation in a new turn.
        later = text_frame("t1", 2, "m2", body="are you back?")
        one.api("POST", "/federation/v1/frames", token, json={"frames": [later]})
        wait_for(lambda: len(one.get(f"/runs?topic={seen['id']}", bo)["items"]) == 2)
        # Also by THREAD@CONNECTION, which names a peer's thread exactly.
        assert one.cli("agent-conversation", "show", "t1@peer", token=bo).exit_code == 0
