"""A receiving installation SIGKILLed in the middle of traffic and started again on the same
store (issue 10): what it acknowledged is there, what it had not acknowledged is sent again,
and no text reaches its agent twice. The receiver is a real `parley serve` process; the sender
a real server with its own store, its agents sending through their real actions."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from tests.cli.test_serve import cli
from tests.cli.test_server_killed import Server
from tests.federation.peers import Installation, hire_scripted, installations, invite, wait_for

SENDERS, LISTENERS, PER_THREAD = 5, 10, 10  # 50 threads (sender, listener) of 10 texts each
BURST = (
    """
rules:
  - when: {text: "^burst (?P<who>[a-z0-9-]+)$"}
    do:
"""
    + "".join(
        f'      - send: {{to: "{{who}}@two", text: "{n}"}}\n' for n in range(1, PER_THREAD + 1)
    )
    + "otherwise: []\n"
)


def _ok(two: Server, *args: str) -> str:
    done = cli(two.workdir, two.port, *args)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def _delivered(one: Installation) -> int:
    frames = one.get("/deliveries?limit=1000")["items"]
    return sum(1 for d in frames if d["kind"] == "frame" and d["state"] == "delivered")


def _frame_states(one: Installation) -> list[str]:
    return [d["state"] for d in one.get("/deliveries?limit=1000")["items"] if d["kind"] == "frame"]


def _texts(two: Server) -> dict[tuple[str, str], list[str]]:
    """Each agent conversation's texts at two, as its agent reads them, by (agent, sender)."""
    with two.api() as api:
        threads = api.get("/agent-conversations?include_closed=true&limit=500").json()["items"]
        found: dict[tuple[str, str], list[str]] = {}
        for thread in threads:
            page: list[dict[str, Any]] = api.get(
                f"/topics/{thread['id']}/messages?limit=500"
            ).json()["items"]
            key = (thread["agent"], thread["sender"])
            found[key] = [m["body"] for m in reversed(page) if m["kind"] == "text"]
        return found


def test_a_receiver_killed_mid_traffic_keeps_what_it_acknowledged_and_gets_the_rest_once(
    tmp_path: Path, store_urls: list[str]
) -> None:
    (tmp_path / "two").mkdir()
    two = Server(tmp_path / "two")
    two.start()
    try:
        with installations(tmp_path, store_urls[:1], ["one"]) as (one,):
            _ok(two, "connection", "accept", invite(one, "two"), "--name", "one")
            senders = [f"s{i}" for i in range(SENDERS)]
            listeners = [f"l{i}" for i in range(LISTENERS)]
            for name in senders:
                hire_scripted(one, name, BURST, tmp_path)
            for name in listeners:
                rules = tmp_path / f"{name}.yaml"
                rules.write_text("otherwise: []\n")
                _ok(two, "agent", "hire", name, "--node", "local", "--brain", f"scripted:{rules}")
            _ok(two, "connection", "expose", "one", *listeners)

            def traffic() -> None:
                for listener in listeners:
                    for sender in senders:
                        one.ok("say", sender, f"burst {listener}")

            sending = threading.Thread(target=traffic)
            sending.start()
            total = SENDERS * LISTENERS * PER_THREAD
            wait_for(lambda: _delivered(one) >= total // 5)
            two.kill()
            acknowledged = _delivered(one)  # two is dead: nothing more can be acknowledged
            assert acknowledged < total
            two.start()
            kept = sum(len(texts) for texts in _texts(two).values())
            assert kept >= acknowledged  # all acknowledged texts survived the kill
            sending.join()

            def all_settled() -> bool:
                states = _frame_states(one)
                return len(states) == total and all(s != "pending" for s in states)

            wait_for(all_settled, within=600)
            assert set(_frame_states(one)) == {"delivered"}
            in_order = [str(n) for n in range(1, PER_THREAD + 1)]
            assert _texts(two) == {
                (listener, f"{sender}@one"): in_order
                for listener in listeners
                for sender in senders
            }
    finally:
        two.stop()
