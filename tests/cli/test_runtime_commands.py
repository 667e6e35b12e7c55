"""The runtime's verbs through a running server: talking, tasks, runs, stop, nodes, acting."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner, Result

from parley.cli.main import app as cli_app
from tests.runs.support import script
from tests.served import Served
from tests.support import items, oldest_first
from tests.support import until as polled

ECHO = """
    rules:
      - when: {text: "hello"}
        do:
          - reply: "hi {sender}, you said {text}"
    otherwise:
      - reply: "first line"
      - reply: "second line"
"""
SLEEPER = """
    otherwise:
      - sleep: 30
"""


def run(served: Served, *args: str, stdin: str | None = None, **env: str) -> Result:
    """The CLI as a user runs it, as the owner unless ``env`` says otherwise."""
    base = {"PARLEY_URL": served.url, "PARLEY_TOKEN": served.owner_token}
    return CliRunner().invoke(cli_app, list(args), env=base | env, input=stdin)


def ok(served: Served, *args: str, stdin: str | None = None, **env: str) -> str:
    result = run(served, *args, stdin=stdin, **env)
    assert result.exit_code == 0, result.output
    return result.stdout


def ok_json(served: Served, *args: str, **env: str) -> Any:
    return json.loads(ok(served, *args, "--json", **env))


def ok_items(served: Served, *args: str, **env: str) -> list[Any]:
    """The rows of a list command's page (--json prints the page)."""
    return items(ok_json(served, *args, **env))


def hire(served: Served, tmp_path: Path, name: str, rules: str | None = None) -> None:
    brain = ["--brain", script(tmp_path, name, rules)] if rules else []
    ok(served, "agent", "hire", name, "--node", "local", *brain)


def until(check: Callable[[], Any], within: float = 10.0) -> Any:
    """Poll until ``check`` returns something truthy, and return it; bounded against a hang."""
    found = polled(check, within, pause=0.02)
    assert found, "gave up waiting"
    return found


def running_run(served: Served, agent: str) -> int:
    """The agent's running run, asked over HTTP, not through the CLI: a CLI command in another
    thread (``say`` waiting for this run) swaps the process's stdout when it begins, and a
    CliRunner invocation it overlaps here would lose its output to it."""
    headers = {"Authorization": f"Bearer {served.owner_token}"}
    query = {"agent": agent, "state": "running"}

    def running() -> list[Any]:
        answer = httpx.get(f"{served.url}/api/v1/runs", params=query, headers=headers)
        return items(answer.json())

    run_id: int = until(running)[0]["id"]
    return run_id


def test_say_prints_the_reply(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "echo", ECHO)
    assert ok(served, "say", "echo", "hello there") == "hi owner, you said hello there\n"
    answer = ok_json(served, "say", "echo", "hello again")
    assert answer == {
        "run": answer["run"],
        "state": "finished",
        "reply": "hi owner, you said hello again",
        "cut_short": False,
        "reason": None,
        "refusals": [],
    }


def test_say_reads_a_dash_from_stdin(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "echo", ECHO)
    assert ok(served, "say", "echo", "-", stdin="hello\nfrom a file\n") == (
        "hi owner, you said hello\nfrom a file\n"
    )


def test_chat_streams_the_reply_and_quits(served: Served, tmp_path: Path) -> None:
    rules = "otherwise:\n  - sleep: 0.2\n  - reply: first line\n  - reply: second line\n"
    hire(served, tmp_path, "echo", rules)  # the sleep lets chat watch before the first chunk
    out = ok(served, "chat", "echo", stdin="anyone?\n/quit\nnever sent\n")
    # The scripted brain streams each reply whole: two chunks, written as they came.
    assert out == "you> echo> first line\nsecond line\nyou> "
    bodies = [
        m["body"] for m in oldest_first(ok_json(served, "conversation", "show", "echo")["messages"])
    ]
    assert bodies == ["anyone?", "first line\nsecond line"]


def test_chat_stop_and_end_of_input(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "echo", ECHO)
    ok(served, "say", "echo", "hello")
    # A /stop typed while a reply streams stops that run: here it comes first, nothing runs.
    out = ok(served, "chat", "echo", stdin="/stop\nhello\n")
    assert (
        out == "you> echo was not working on anything\nyou> echo> hi owner, you said hello\nyou> \n"
    )


def test_chat_with_an_unknown_agent_exits_3(served: Served) -> None:
    result = run(served, "chat", "ghost", stdin="hello\n")
    assert result.exit_code == 3
    assert "no agent named 'ghost'" in result.stderr


def test_conversation_show_list_delete(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "echo", ECHO)
    ok(served, "say", "echo", "hello")
    shown = ok_json(served, "conversation", "show", "echo")
    messages = oldest_first(shown["messages"])
    assert [(m["author"], m["kind"], m["body"]) for m in messages] == [
        ("owner", "text", "hello"),
        ("echo", "reply", "hi owner, you said hello"),
    ]
    assert [r["state"] for r in items(shown["runs"])] == ["finished"]
    words = ok(served, "conversation", "show", "echo")
    assert "messages" in words and "hi owner, you said hello" in words and "finished" in words
    assert [c["agent"] for c in ok_items(served, "conversation", "list")] == ["echo"]
    assert ok(served, "conversation", "stop", "echo") == "echo was not working on anything\n"
    assert ok(served, "conversation", "delete", "echo") == "deleted your conversation with echo\n"
    gone = run(served, "conversation", "show", "echo")
    assert gone.exit_code == 3
    assert "you have no conversation with echo" in gone.stderr
    assert ok_items(served, "conversation", "list") == []


def test_task_create_list_show(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "worker", "otherwise:\n  - complete: 'summed: {text}'\n")
    said = re.fullmatch(
        r"task (\d+) \(run (\d+) queued\)\n",
        ok(served, "task", "create", "worker", "sum the column"),
    )
    assert said, "task create says the task and its run"
    task_id, run_id = int(said[1]), int(said[2])
    done = until(lambda: ok_items(served, "task", "list", "--status", "done"))
    assert [(t["id"], t["result"]) for t in done] == [(task_id, "summed: sum the column")]
    assert ok_items(served, "task", "list", "--status", "open") == []
    shown = ok_json(served, "task", "show", str(task_id))
    assert shown["topic"]["status"] == "done"
    assert oldest_first(shown["messages"])[0]["body"] == "sum the column"
    assert [(r["id"], r["agent"]) for r in items(shown["runs"])] == [(run_id, "worker")]
    words = ok(served, "task", "show", str(task_id))
    assert "sum the column" in words and "runs" in words


def test_task_stop_cancel_delete(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "sleeper", SLEEPER)
    task_id = str(ok_json(served, "task", "create", "sleeper", "nap")["id"])
    run_id = running_run(served, "sleeper")
    assert ok(served, "task", "stop", task_id) == f"stopped run {run_id}\n"
    assert ok(served, "task", "stop", task_id) == f"nothing was running on task {task_id}\n"
    assert ok(served, "task", "cancel", task_id) == f"task {task_id}: cancelled\n"
    assert ok(served, "task", "delete", task_id) == f"deleted task {task_id}\n"
    # Deleted: gone from the list; its history stays readable for owners.
    assert ok_items(served, "task", "list") == []
    assert ok_json(served, "task", "show", task_id)["topic"]["closed_reason"] == (
        "task deleted by owner"
    )


def test_task_list_refuses_an_unknown_status(served: Served) -> None:
    assert run(served, "task", "list", "--status", "lost").exit_code == 2


def test_run_list_and_show(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "echo", ECHO)
    run_id = ok_json(served, "say", "echo", "hello")["run"]
    listed = ok_items(served, "run", "list", "--agent", "echo", "--state", "finished")
    assert [(r["id"], r["state"]) for r in listed] == [(run_id, "finished")]
    assert ok_items(served, "run", "list", "--state", "running", "--limit", "5") == []
    shown = ok_json(served, "run", "show", str(run_id))
    assert (shown["run"]["output"], shown["topic"]["kind"]) == (
        "hi owner, you said hello",
        "conversation",
    )
    assert [m["body"] for m in shown["input"]] == ["hello"]
    words = ok(served, "run", "show", str(run_id))
    assert "root" in words and "owner: hello" in words and "hi owner, you said hello" in words


def test_stop_a_sleeping_run_then_again(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "sleeper", SLEEPER)
    ok(served, "task", "create", "sleeper", "nap")
    run_id = str(running_run(served, "sleeper"))
    assert ok(served, "stop", run_id) == f"stopped run {run_id}\n"
    shown = ok_json(served, "run", "show", run_id)["run"]
    assert (shown["state"], shown["reason"]) == ("stopped", "stopped by owner")
    assert ok(served, "stop", run_id) == f"run {run_id} had already ended\n"
    assert ok_json(served, "stop", run_id) == {"stopped": []}


def test_say_on_a_stopped_turn_exits_4(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "sleeper", SLEEPER)
    stopper = threading.Thread(target=_stop_when_running, args=(served, "sleeper"))
    stopper.start()
    result = run(served, "say", "sleeper", "nap")
    stopper.join()
    assert result.exit_code == 4, result.output
    assert result.stderr == "error: the turn was stopped (stopped by owner)\n"


def _stop_when_running(served: Served, agent: str) -> None:
    """Stops the agent's run from another thread, over plain HTTP (the CLI is busy saying)."""
    with httpx.Client(base_url=f"{served.url}/api/v1", headers=_bearer(served)) as api:
        params = {"agent": agent, "state": "running"}
        rows = until(lambda: api.get("/runs", params=params).json()["items"])
        api.post(f"/runs/{rows[0]['id']}/stop").raise_for_status()


def _bearer(served: Served) -> dict[str, str]:
    return {"Authorization": f"Bearer {served.owner_token}"}


def test_say_on_a_failed_turn_exits_7_apart_from_unreachable(
    served: Served, tmp_path: Path
) -> None:
    hire(served, tmp_path, "echo", ECHO)
    (tmp_path / "echo.yaml").write_text("rules: 5\n")  # read at every turn: this one fails
    result = run(served, "say", "echo", "hello", "--json")
    assert result.exit_code == 7  # not 6: the server answered, the turn did not
    assert json.loads(result.stdout)["state"] == "failed"
    assert result.stderr.startswith("error: the turn failed: ")
    assert "is not a valid script" in result.stderr


def test_node_ask_waits_for_the_answer(served: Served) -> None:
    assert "I heard: are you there?" in ok(served, "node", "ask", "local", "are you there?")
    answer = ok_json(served, "node", "ask", "local", "still?")
    assert answer["state"] == "finished" and "I heard: still?" in answer["reply"]
    exchanges = ok_json(served, "node", "exchanges", "local")
    assert [m["body"] for m in oldest_first(exchanges)][::2] == ["are you there?", "still?"]
    assert "are you there?" in ok(served, "node", "exchanges", "local")


def test_text_with_a_nul_byte_exits_2_naming_it(served: Served, tmp_path: Path) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local")
    cases = [
        (("say", "scribe", "-"), "text contains a NUL byte"),
        (("task", "create", "scribe", "-"), "text contains a NUL byte"),
        (("node", "ask", "local", "-"), "text contains a NUL byte"),
        (("agent", "remember", "scribe", "half\x00way"), "note contains a NUL byte"),
    ]
    for args, says in cases:
        result = run(served, *args, stdin="half\x00way\n")
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(f"error: {says}"), result.stderr
    assert ok_items(served, "agent", "memory", "scribe") == []
    assert ok_items(served, "task", "list") == []


def test_act_without_a_run_token_exits_5(served: Served) -> None:
    result = run(served, "act", "remember", "a note")  # PARLEY_TOKEN is set: it must not count
    assert result.exit_code == 5
    assert result.stderr == (
        "error: a role token without a run has no topic: PARLEY_RUN_TOKEN is not set\n"
    )


def test_act_with_a_token_of_no_running_turn_exits_5(served: Served) -> None:
    for token, says in [
        ("prt_bogus", "this run token belongs to no running turn"),
        (served.owner_token, "a role token without a run has no topic"),
    ]:
        result = run(served, "act", "report", "hi", PARLEY_RUN_TOKEN=token)
        assert result.exit_code == 5, result.output
        assert says in result.stderr


def test_act_from_a_running_turn(served: Served, tmp_path: Path) -> None:
    """A command brain hands its run token over and waits; we act with it as its process would."""
    program = tmp_path / "brain.py"
    program.write_text(
        "import os, pathlib, time\n"
        "pathlib.Path('run-token').write_text(os.environ['PARLEY_RUN_TOKEN'])\n"
        "time.sleep(30)\n"
    )
    brain = f"command:{sys.executable} {program}"
    hired = ok_json(served, "agent", "hire", "coder", "--node", "local", "--brain", brain)
    token_file = Path(hired["workspace"]) / "run-token"  # it writes where it runs
    task_id = str(ok_json(served, "task", "create", "coder", "fix the bug")["id"])
    token = until(lambda: token_file.exists() and token_file.read_text())
    acting = {"PARLEY_RUN_TOKEN": token, "PARLEY_TOKEN": "pk_not_used"}
    given = ok_json(served, "act", "input", **acting)
    assert (given["agent"], given["topic_kind"], given["topic_id"]) == (
        "coder",
        "task",
        int(task_id),
    )
    assert (given["root_id"], given["counterpart"]) == (int(task_id), None)
    assert [(m["author"], m["text"]) for m in given["said"]] == [("owner", "fix the bug")]
    assert "owner: fix the bug" in ok(served, "act", "input", **acting).splitlines()
    # Silent on success, so that nothing of it ends up in the brain's reply on stdout.
    assert ok(served, "act", "remember", "tests live in tests/", **acting) == ""
    said = ok(served, "act", "report", "-", "--verbose", stdin="half way\n", **acting)
    assert said.startswith(f"reported on task {task_id}")
    # --json gives the ids of what an action made or reached, to go on from.
    ok(served, "agent", "hire", "helper", "--node", "local")
    spawned = ok_json(served, "act", "spawn", "helper", "check the fix", **acting)
    subtask = ok_json(served, "task", "show", str(spawned["task_id"]))
    assert (subtask["topic"]["agent"], subtask["topic"]["text"]) == ("helper", "check the fix")
    sent = ok_json(served, "act", "send", "helper", "look at this", **acting)
    shown = ok_json(served, "agent-conversation", "show", sent["thread_id"])
    assert shown["topic"]["id"] == sent["topic_id"]
    assert [m["body"] for m in items(shown["messages"])] == ["look at this"]
    completed = ok_json(served, "act", "complete", "fixed", **acting)
    assert completed["task_id"] == int(task_id) and completed["result"] == f"task {task_id} done"
    ok(served, "task", "stop", task_id)
    notes = ok_items(served, "agent", "memory", "coder")
    assert [n["note"] for n in notes] == ["tests live in tests/"]
    task = ok_json(served, "task", "show", task_id)
    assert (task["topic"]["status"], task["topic"]["result"]) == ("done", "fixed")
    assert "half way" in [m["body"] for m in items(task["messages"])]


def test_a_member_cannot_read_an_owners_conversation(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "asker", "otherwise:\n  - send: {to: helper, text: 'help: {text}'}\n")
    ok(served, "agent", "hire", "helper", "--node", "local")
    run_id = str(ok_json(served, "say", "asker", "the report")["run"])
    threads = ok_items(served, "agent-conversation", "list")
    assert [(t["sender"], t["agent"]) for t in threads] == [("asker", "helper")]
    thread_id = threads[0]["thread_id"]
    shown = ok_json(served, "agent-conversation", "show", thread_id)
    assert [m["body"] for m in items(shown["messages"])] == ["help: the report"]
    history = ok_items(served, "agent", "history", "asker", "helper")
    assert [h["topic"]["thread_id"] for h in history] == [thread_id]
    assert "help: the report" in ok(served, "agent", "history", "asker", "helper")
    member = ok_json(served, "person", "add", "ada", "--member")["token"]
    assert ok_items(served, "agent-conversation", "list", PARLEY_TOKEN=member) == []
    assert ok_items(served, "agent", "history", "asker", "helper", PARLEY_TOKEN=member) == []
    for args in (["run", "show", run_id], ["agent-conversation", "show", thread_id]):
        refused = run(served, *args, PARLEY_TOKEN=member)
        assert refused.exit_code == 3, refused.output


def test_agent_conversation_stop_and_closed_ones(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "asker", "otherwise:\n  - send: {to: helper, text: '{text}'}\n")
    hire(served, tmp_path, "helper", SLEEPER)
    ok(served, "say", "asker", "wake up")
    thread_id = ok_items(served, "agent-conversation", "list")[0]["thread_id"]
    run_id = running_run(served, "helper")
    assert ok(served, "agent-conversation", "stop", thread_id) == f"stopped run {run_id}\n"
    ok(served, "conversation", "delete", "asker")  # closes the agent conversations it rooted
    assert ok_items(served, "agent-conversation", "list") == []
    closed = ok_items(served, "agent-conversation", "list", "--all")
    assert [t["thread_id"] for t in closed] == [thread_id]


def test_a_deleted_conversation_page_by_page(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "echo", ECHO)
    ok(served, "say", "echo", "hello one")
    ok(served, "say", "echo", "hello two")
    conversation = str(ok_json(served, "conversation", "show", "echo")["topic"]["id"])
    ok(served, "conversation", "delete", "echo")
    deleted = ok_items(served, "conversation", "list", "--deleted")
    assert [(str(c["id"]), c["closed_reason"]) for c in deleted] == [
        (conversation, "conversation deleted by owner")
    ]
    assert "hi owner, you said hello two" in ok(served, "conversation", "show", conversation)
    assert ok_json(served, "topic", "show", conversation)["topic"]["kind"] == "conversation"
    newest = ok(served, "topic", "messages", conversation, "--limit", "1")
    assert "you said hello two" in newest and "more: --before " in newest
    cursor = newest.strip().splitlines()[-1].split()[-1]
    older = ok(served, "topic", "messages", conversation, "--limit", "1", "--before", cursor)
    assert "hello two" in older and "you said" not in older
    runs = ok_items(served, "run", "list", "--topic", conversation)
    assert [r["state"] for r in runs] == ["finished", "finished"]
    assert ok_items(served, "task", "list", "--deleted", "--parent", conversation) == []
    assert ok_items(served, "agent-conversation", "list", "--all", "--root", conversation) == []
    refused = run(served, "run", "list", "--before", "bogus")
    assert refused.exit_code == 2
    assert "is not a cursor of the runs list" in refused.stderr
