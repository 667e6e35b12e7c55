"""Refusals reach the person (issue 30, points 3 and 17), between real servers with separate
stores: every text a paused connection refuses says ``paused``; the refusal is told in the root
the person reads, worded from their side and naming who paused; a ``say`` or a ``task create
--wait`` still waiting exits non-zero with it; the agent that sent the text gets it at its
next turn there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.federation.peers import (
    LISTENER,
    Installation,
    connect,
    frames,
    hire_scripted,
    installations,
    wait_for,
)
from tests.support import bearer

PAUSED_BY_TWO = "paused: two paused the connection: the text was not taken"
SENDER = """
rules:
  - when: {text: "^burst$"}
    do:
      - send: {to: "listener@two", text: "first"}
      - send: {to: "listener@two", text: "second"}
  - when: {text: "^tell (?P<what>.+)"}
    do:
      - send: {to: "listener@two", text: "{what}"}
      - reply: "sent to listener@two"
  - when: {from: parley, text: "was not delivered|dropped unanswered"}
    do:
      - reply: "noted: {text}"
otherwise: []
"""
# A command brain whose turn waits for the test: it leaves its run token for the test to act
# with (written whole, then renamed: a test that sees the file reads all of it), and ends
# (saying all went well) once the test writes ``go`` into its workspace.
HOLDING = (
    "import os, pathlib, time\n"
    "pathlib.Path('token.part').write_text(os.environ['PARLEY_RUN_TOKEN'])\n"
    "pathlib.Path('token.part').rename('token')\n"
    "while not pathlib.Path('go').exists():\n"
    "    time.sleep(0.02)\n"
    "print('sent to listener@two')\n"
)


def _one_and_two(one: Installation, two: Installation, folder: Path) -> None:
    connect(one, two)
    hire_scripted(one, "sender", SENDER, folder)
    hire_scripted(two, "listener", LISTENER, folder)
    two.ok("connection", "expose", "one", "listener")


def _settled(at: Installation) -> bool:
    return bool(frames(at)) and all(f["state"] != "pending" for f in frames(at))


def _root_notices(at: Installation, path: str) -> list[str]:
    detail = at.get(path)
    return [m["body"] for m in reversed(detail["messages"]["items"]) if m["kind"] == "notice"]


def _holding(at: Installation, name: str, folder: Path) -> Path:
    """Hire ``name`` on ``at`` with the holding brain; its workspace."""
    program = folder / "holding.py"
    program.write_text(HOLDING)
    brain = f"command:{sys.executable} {program}"
    hired = json.loads(at.ok("agent", "hire", name, "--node", at.name, "--brain", brain, "--json"))
    return Path(hired["workspace"])


def _cli(at: Installation, *args: str) -> subprocess.Popen[str]:
    """``parley ARGS`` against ``at`` as a process of its own, while the test goes on."""
    env = os.environ | {"PARLEY_URL": at.url, "PARLEY_TOKEN": at.served.owner_token}
    return subprocess.Popen(
        [sys.executable, "-m", "parley", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _send_as_run(at: Installation, workspace: Path, to: str, text: str) -> Any:
    """The holding brain's send, with its run token, as ``parley act send`` would do it."""
    wait_for(lambda: (workspace / "token").exists())
    token = (workspace / "token").read_text()
    answer = httpx.post(
        f"{at.url}/api/v1/act/send", json={"to": to, "text": text}, headers=bearer(token)
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_every_text_a_paused_connection_refuses_says_paused(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        _one_and_two(one, two, tmp_path)
        two.ok("connection", "pause", "one")
        # A new thread's two texts in one batch: the second's seq was checked before the pause
        # and it was refused as "from the future".
        one.ok("say", "sender", "burst")
        wait_for(lambda: len(frames(one)) == 2 and _settled(one))
        assert [(f["state"], f["last_error"]) for f in frames(one)] == [
            ("failed", PAUSED_BY_TWO)
        ] * 2


def test_a_refusal_is_told_in_the_persons_root_and_at_the_senders_next_turn_there(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        _one_and_two(one, two, tmp_path)
        two.ok("connection", "pause", "one")
        assert one.ok("say", "sender", "tell hi") == "sent to listener@two\n"
        wait_for(lambda: _settled(one))
        told = f"sender's text to listener@two ('hi') was not delivered: {PAUSED_BY_TWO}"
        assert _root_notices(one, "/conversations/sender") == [told]
        # The sender learns of it at its next turn in the root, once, with no peer's answer.
        assert one.ok("say", "sender", "anything new?") == f"noted: {told}\n"
        assert one.ok("say", "sender", "and now?") == "(no reply)\n"


def test_a_say_still_waiting_when_its_text_is_refused_exits_with_the_refusal(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        _one_and_two(one, two, tmp_path)
        workspace = _holding(one, "liaison", tmp_path)
        two.ok("connection", "pause", "one")
        said = _cli(one, "say", "liaison", "ask listener@two")
        _send_as_run(one, workspace, "listener@two", "hello")
        wait_for(lambda: _settled(one))
        (workspace / "go").write_text("")  # the turn ends, cheerfully
        out, err = said.communicate(timeout=60)
        assert said.returncode == 4, (out, err)
        assert out == "sent to listener@two\n"
        told = f"liaison's text to listener@two ('hello') was not delivered: {PAUSED_BY_TWO}"
        assert err == f"error: {told}\n"


def test_a_task_waited_for_ends_the_wait_with_the_refusal_and_goes_on(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        _one_and_two(one, two, tmp_path)
        workspace = _holding(one, "liaison", tmp_path)
        two.ok("connection", "pause", "one")
        waiting = _cli(one, "task", "create", "liaison", "ask listener@two", "--wait")
        _send_as_run(one, workspace, "listener@two", "hello")
        out, err = waiting.communicate(timeout=60)
        assert waiting.returncode == 4, (out, err)
        (task,) = one.get("/tasks")["items"]
        told = f"liaison's text to listener@two ('hello') was not delivered: {PAUSED_BY_TWO}"
        assert err == (
            f"error: {told}\ntask {task['id']} goes on (parley task show {task['id']})\n"
        )
        assert _root_notices(one, f"/tasks/{task['id']}") == [told]
        assert task["status"] == "open"
        (workspace / "go").write_text("")


def test_a_send_refused_at_once_is_told_in_the_root_with_its_code(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls[:2], ["one", "two"]) as (one, two):
        _one_and_two(one, two, tmp_path)
        workspace = _holding(one, "liaison", tmp_path)
        one.ok("connection", "pause", "two")
        said = _cli(one, "say", "liaison", "ask listener@two")
        wait_for(lambda: (workspace / "token").exists())
        token = (workspace / "token").read_text()
        answer = httpx.post(
            f"{one.url}/api/v1/act/send",
            json={"to": "listener@two", "text": "hello"},
            headers=bearer(token),
        )
        assert answer.status_code == 409
        assert answer.json()["reason"] == "paused"  # the code, beside the words, in the API
        (workspace / "go").write_text("")
        out, err = said.communicate(timeout=60)
        assert said.returncode == 4, (out, err)
        told = (
            "liaison's text to listener@two was not sent:"
            " paused: the connection to two was paused here"
        )
        assert err == f"error: {told}\n"
        assert _root_notices(one, "/conversations/liaison") == [told]


DOZER = """
otherwise:
  - sleep: 600
"""


def test_text_taken_then_dropped_by_a_pause_is_told_on_both_sides(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        connect(one, two)
        hire_scripted(one, "sender", SENDER.replace("listener@two", "dozer@two"), tmp_path)
        hire_scripted(two, "dozer", DOZER, tmp_path)
        two.ok("connection", "expose", "one", "dozer")
        one.ok("say", "sender", "tell wake up")
        wait_for(
            lambda: any(r["state"] == "running" for r in two.get("/runs?agent=dozer")["items"])
        )
        assert frames(one)[0]["state"] == "delivered"  # taken by two

        two.ok("connection", "pause", "one")  # the dozer's turn is stopped: nobody answers
        (thread,) = two.get("/agent-conversations?include_closed=true")["items"]
        assert _root_notices(two, f"/topics/{thread['id']}") == [
            "1 text from sender@one to dozer taken here, dropped unanswered:"
            " paused: the connection to one was paused here"
        ]
        two.ok("connection", "unpause", "one")  # the report goes now
        told = (
            "1 text from sender to dozer@two taken there, dropped unanswered:"
            " paused: two paused the connection"
        )
        wait_for(lambda: bool(_root_notices(one, "/conversations/sender")))
        assert _root_notices(one, "/conversations/sender") == [told]
        assert one.ok("say", "sender", "anything?") == f"noted: {told}\n"
