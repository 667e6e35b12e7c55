"""Every text the help says may be given as "-" is read from stdin, through a running server.
(``say``, ``node ask`` and ``act``'s texts are in test_runtime_commands.py.)"""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from parley.cli.main import app as cli_app
from tests.cli.test_runtime_commands import ok, ok_json, run
from tests.served import Served
from tests.support import items

LONG = "first line\nsecond line, with 'quotes' and \"more\"\n\n"


def test_hire_takes_its_engram_from_stdin(served: Served) -> None:
    hired = run(served, "agent", "hire", "scribe", "--node", "local", "--engram", "-", stdin=LONG)
    assert hired.exit_code == 0, hired.output
    assert ok_json(served, "agent", "show", "scribe")["engram"] == LONG.rstrip("\n")


def test_remember_node_engram_and_task_create_take_their_text_from_stdin(served: Served) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local")
    ok(served, "agent", "remember", "scribe", "-", stdin=LONG)
    [note] = items(ok_json(served, "agent", "memory", "scribe"))
    assert note["note"] == LONG.rstrip("\n")
    ok(served, "node", "engram", "local", "-", stdin=LONG)
    assert ok_json(served, "node", "show", "local")["engram"] == LONG.rstrip("\n")
    task = ok_json(served, "task", "create", "scribe", "-", stdin=LONG)
    assert ok_json(served, "task", "show", str(task["id"]))["topic"]["text"] == LONG.rstrip("\n")


def test_answer_takes_its_text_from_stdin(served: Served) -> None:
    token = ok_json(served, "person", "add", "ada", "--member")["token"]
    ok(served, "agent", "hire", "ada-desk", "--node", "local", "--human", "ada")
    ok(served, "task", "create", "ada-desk", "count the spoons")
    [turn] = _until_turn(served, token)
    answered = run(served, "answer", str(turn["run"]["id"]), "-", stdin=LONG, PARLEY_TOKEN=token)
    assert answered.exit_code == 0, answered.output
    assert ok_json(served, "run", "show", str(turn["run"]["id"]))["run"]["output"] == (
        LONG.rstrip("\n")
    )


def test_every_text_argument_says_that_a_dash_reads_stdin() -> None:
    for args in (
        ["say"],
        ["answer"],
        ["task", "create"],
        ["node", "ask"],
        ["node", "engram"],
        ["agent", "remember"],
        ["agent", "hire"],
        ["act", "send"],
    ):
        shown = CliRunner().invoke(cli_app, [*args, "--help"], env={"COLUMNS": "200"})
        assert '"-" reads it from stdin' in shown.stdout, args


def _until_turn(served: Served, token: str) -> list[Any]:
    for _ in range(500):
        waiting = items(ok_json(served, "turns", PARLEY_TOKEN=token))
        if waiting:
            return waiting
    raise AssertionError("no turn came for ada")
