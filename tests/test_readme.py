"""The README's tours are run, command by command, against a real server, with its YAML files
written where the tour says they are."""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.served import Served

README = Path(__file__).parent.parent / "README.md"


def console_blocks() -> list[list[list[str]]]:
    blocks = re.findall(r"```console\n(.*?)```", README.read_text(), re.S)
    assert blocks, "the README lost its tours"
    return [
        [
            shlex.split(line.removeprefix("$ "))[1:]
            for line in block.splitlines()
            if line.startswith("$ ")
        ]
        for block in blocks
    ]  # each command without '.venv/bin/parley'


def yaml_files() -> dict[str, str]:
    """```yaml blocks whose first line names their file: ``# NAME.yaml``."""
    found = {}
    for block in re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S):
        first, _, _ = block.partition("\n")
        name = re.fullmatch(r"# ([\w.-]+\.yaml)", first.strip())
        assert name, f"a yaml block of the README does not name its file: {first!r}"
        found[name.group(1)] = block
    return found


def test_every_command_of_the_tours_works(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in yaml_files().items():
        (tmp_path / name).write_text(text)
    first, agents_at_work = console_blocks()
    assert len(first) >= 10 and len(agents_at_work) >= 10
    for args in first + agents_at_work:
        result = served.run(*args)
        assert result.exit_code == 0, f"parley {' '.join(args)} failed: {result.output}"
    shown = served.run("agent", "show", "scribe", "--json")
    assert '"warnings": 1' in shown.stdout
    assert '"lifecycle": "retired"' in served.run("agent", "show", "researcher-1", "--json").stdout


def test_the_scripted_tour_does_what_the_readme_says(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in yaml_files().items():
        (tmp_path / name).write_text(text)
    served.run("agent", "hire", "greeter", "--node", "local", "--brain", "scripted:greeter.yaml")
    served.run("agent", "hire", "clerk", "--node", "local", "--brain", "scripted:clerk.yaml")
    assert served.run("say", "greeter", "hello").stdout == "Hello owner, I am greeter.\n"
    noted = served.run("say", "greeter", "remember the kettle is broken").stdout
    assert noted == "Noted: the kettle is broken.\n"
    assert "the kettle is broken" in served.run("agent", "memory", "greeter").stdout
    [note] = json.loads(served.run("agent", "memory", "greeter", "--json").stdout)["items"]
    assert note["origin"].endswith("in a person's conversation")  # the README says where from
    served.run("say", "greeter", "ask the clerk what time is it")
    assert _eventually_reported(served, "The clerk says: It is always tea time.")
    task = served.run("task", "create", "clerk", "count the spoons").stdout.strip()
    assert _eventually(
        lambda: '"result": "42 spoons"' in served.run("task", "show", task, "--json").stdout
    )


def _eventually_reported(served: Served, text: str) -> bool:
    return _eventually(lambda: text in served.run("conversation", "show", "greeter").stdout)


def _eventually(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 10
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
