"""Changing an agent after hiring (``agent set``) and its history (``agent changes``), through the
CLI against a running server; mistakes in a brain are one plain line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_runtime_commands import ok, ok_items, ok_json, run, running_run
from tests.cli.test_waiting import Cli
from tests.runs.support import script
from tests.served import Served

SAYS_ONE = "otherwise:\n  - reply: one\n"
SAYS_TWO = "otherwise:\n  - reply: two\n"


def test_set_engram_brain_and_max_sessions_and_see_the_changes(
    served: Served, tmp_path: Path
) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local", "--engram", "terse")
    brain = script(tmp_path, "scribe", SAYS_ONE)
    changed = json.loads(
        ok(
            served, "agent", "set", "scribe", "--brain", brain, "--max-sessions", "3",
            "--engram", "-", "--json", stdin="patient\nand precise\n",
        )
    )  # fmt: skip
    assert (changed["engram"], changed["brain"], changed["max_sessions"]) == (
        "patient\nand precise",
        brain,
        3,
    )
    assert ok_json(served, "agent", "show", "scribe")["max_sessions"] == 3
    history = ok_items(served, "agent", "changes", "scribe")
    assert {(c["setting"], c["old"], c["new"], c["changed_by"]) for c in history} == {
        ("engram", "terse", "patient\nand precise", "owner"),
        ("brain", "offline", brain, "owner"),
        ("max_sessions", "1", "3", "owner"),
    }
    assert all(c["changed_at"] for c in history)
    in_words = ok(served, "agent", "changes", "scribe")
    assert "max_sessions" in in_words and "owner" in in_words


def test_a_relative_scripted_brain_is_made_absolute_where_it_is_typed(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local")
    script(tmp_path, "rules", SAYS_ONE)
    monkeypatch.chdir(tmp_path)
    changed = ok_json(served, "agent", "set", "scribe", "--brain", "scripted:rules.yaml")
    assert changed["brain"] == f"scripted:{tmp_path}/rules.yaml"


def test_variables_are_in_the_history_by_name_only(served: Served) -> None:
    ok(served, "agent", "hire", "coder", "--node", "local", "--env", "APP_MODE=fast")
    ok(
        served,
        "agent",
        "set",
        "coder",
        "--env",
        "APP_KEY=sk-hidden-value",
        "--unset-env",
        "APP_MODE",
    )
    (change,) = ok_items(served, "agent", "changes", "coder")
    assert (change["setting"], change["old"], change["new"]) == ("env", "APP_MODE", "APP_KEY")
    assert "sk-hidden-value" not in ok(served, "agent", "changes", "coder", "--json")


def test_a_new_brain_answers_from_the_next_turn_never_the_running_one(
    served: Served, tmp_path: Path
) -> None:
    """The running turn keeps the brain it started with; the next one has the new brain."""
    go = tmp_path / "go"
    program = tmp_path / "waits.py"
    program.write_text(
        "import pathlib, time\n"
        f"while not pathlib.Path({str(go)!r}).exists():\n"
        "    time.sleep(0.02)\n"
        "print('old brain')\n"
    )
    ok(served, "agent", "hire", "shifty", "--node", "local", "--brain",
       f"command:{sys.executable} {program}")  # fmt: skip
    # In a process of its own: the CLI runner's captured output is one per interpreter.
    saying = Cli(served, "say", "shifty", "first")
    running_run(served, "shifty")
    ok(served, "agent", "set", "shifty", "--brain", script(tmp_path, "new", SAYS_TWO))
    go.touch()
    assert saying.finish()[:2] == (0, "old brain\n")
    assert ok(served, "say", "shifty", "second") == "two\n"


def test_a_node_session_can_be_given_a_brain_and_nothing_that_is_not_its_own(
    served: Served, tmp_path: Path
) -> None:
    thinks = "otherwise:\n  - reply: 'the node thinks about {text}'\n"
    changed = ok_json(
        served, "agent", "set", "node:local", "--brain", script(tmp_path, "n", thinks)
    )
    assert changed["kind"] == "node"
    assert "the node thinks about disks" in ok(served, "node", "ask", "local", "disks")
    engram = run(served, "agent", "set", "node:local", "--engram", "calm")
    assert engram.exit_code == 2
    assert "its engram is the node's; set it with: parley node engram local TEXT" in engram.stderr
    sessions = run(served, "agent", "set", "node:local", "--max-sessions", "2")
    assert sessions.exit_code == 2 and "runs one turn at a time" in sessions.stderr


def test_only_owners_change_agents(served: Served) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local")
    member = ok_json(served, "person", "add", "ada", "--member")["token"]
    refused = run(served, "agent", "set", "scribe", "--max-sessions", "2", PARLEY_TOKEN=member)
    assert refused.exit_code == 5, refused.output
    assert ok_items(served, "agent", "changes", "scribe", PARLEY_TOKEN=member) == []


def test_bad_values_are_refused_as_at_hire(served: Served) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local")
    for args, message in [
        (["--max-sessions", "0"], "max sessions must be between 1 and 1000, not 0"),
        (["--brain", "psychic:x"], "is not a brain spec"),
        (["--engram", "x" * 20_001], "at most 20000 characters"),
        ([], "nothing to change for agent scribe"),
    ]:
        result = run(served, "agent", "set", "scribe", *args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.stderr, result.stderr
    missing = run(served, "agent", "set", "nobody", "--max-sessions", "2")
    assert missing.exit_code == 3
    assert ok_items(served, "agent", "changes", "scribe") == []


def test_a_model_brain_without_its_key_is_refused_with_the_variable_to_set(
    served: Served,
) -> None:
    refused = run(served, "agent", "hire", "gpt", "--node", "local", "--brain", "openai:gpt-4o")
    assert refused.exit_code == 2
    assert "set PARLEY_OPENAI_API_KEY" in refused.stderr
    assert refused.stderr.count("\n") == 1  # one line
    assert run(served, "agent", "show", "gpt").exit_code == 3  # not hired
    allowed = run(
        served, "agent", "hire", "gpt", "--node", "local", "--brain", "openai:gpt-4o",
        "--allow-missing-key",
    )  # fmt: skip
    assert allowed.exit_code == 0, allowed.output
    assert "warning: no API key for brain openai:gpt-4o (PARLEY_OPENAI_API_KEY)" in allowed.stderr
    changed = run(served, "agent", "set", "gpt", "--brain", "anthropic:claude-sonnet-4-5")
    assert changed.exit_code == 2 and "set PARLEY_ANTHROPIC_API_KEY" in changed.stderr
    assert ok_json(served, "agent", "show", "gpt")["brain"] == "openai:gpt-4o"


def test_a_bad_rule_file_is_one_line_naming_file_and_line(served: Served, tmp_path: Path) -> None:
    bad_yaml = script(tmp_path, "bad-yaml", "otherwise:\n  - reply: [one\n")
    bad_regex = script(tmp_path, "bad-regex", "rules:\n  - when: {text: 'a(b'}\n    do: []\n")
    for brain, line, problem in [
        (bad_yaml, "line 3", "not YAML"),
        (bad_regex, "line 2", "not a regular expression"),
    ]:
        result = run(served, "agent", "hire", "rules", "--node", "local", "--brain", brain)
        assert result.exit_code == 2
        path = brain.removeprefix("scripted:")
        assert result.stderr.startswith(f"error: scripted brain file {path} is not a valid script")
        assert line in result.stderr and problem in result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_a_rule_file_broken_after_hiring_fails_the_turn_in_one_line(
    served: Served, tmp_path: Path
) -> None:
    brain = script(tmp_path, "rules", SAYS_ONE)
    ok(served, "agent", "hire", "rules", "--node", "local", "--brain", brain)
    (tmp_path / "rules.yaml").write_text("rules:\n  - when: {text: '(?P<x'}\n    do: []\n")
    result = run(served, "say", "rules", "hello")
    assert result.exit_code == 7  # a failed turn
    assert result.stderr.count("\n") == 1
    assert f"scripted brain file {tmp_path / 'rules.yaml'} is not a valid script: line 2" in (
        result.stderr
    )
