"""The README's tours are run, block by block and command by command, against a real server,
with the files they name (YAML rules, Python programs) written where the tour says they are,
and the output they show checked."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.served import Served
from tests.support import until

README = Path(__file__).parent.parent / "README.md"
PARLEY = ".venv/bin/parley"


@dataclass(frozen=True)
class Command:
    line: str  # as the README writes it, after "$ "
    shown: list[str]  # the output the README shows under it, if any

    def args(self, workdir: Path) -> list[str]:
        """The command's arguments, ``$PWD`` being the working directory, without the
        ``.venv/bin/parley`` in front."""
        words = shlex.split(self.line.replace("$PWD", str(workdir)))
        assert words[0] == PARLEY, f"a tour command that is not parley's: {self.line!r}"
        return words[1:]


def console_blocks() -> list[list[Command]]:
    """Every ```console block in order: its commands, each with the lines shown under it."""
    blocks = re.findall(r"```console\n(.*?)```", README.read_text(), re.S)
    assert blocks, "the README lost its tours"
    found = []
    for block in blocks:
        commands: list[Command] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                commands.append(Command(line.removeprefix("$ "), []))
            else:
                assert commands, f"output before any command in a tour: {line!r}"
                commands[-1].shown.append(line)
        found.append(commands)
    return found


def named_files() -> dict[str, str]:
    """```yaml and ```python blocks, each naming its file on its first line: ``# NAME``."""
    found = {}
    for language, suffix in (("yaml", "yaml"), ("python", "py")):
        for block in re.findall(rf"```{language}\n(.*?)```", README.read_text(), re.S):
            first, _, _ = block.partition("\n")
            name = re.fullmatch(rf"# ([\w.-]+\.{suffix})", first.strip())
            assert name, f"a {language} block of the README does not name its file: {first!r}"
            found[name.group(1)] = block
    return found


def write_named_files(workdir: Path) -> None:
    for name, text in named_files().items():
        (workdir / name).write_text(text)


def test_every_command_of_the_tours_works(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_named_files(tmp_path)
    tours = console_blocks()
    assert len(tours) >= 3 and all(len(tour) >= 4 for tour in tours)
    for command in (command for tour in tours for command in tour):
        result = served.run(*command.args(tmp_path))
        assert result.exit_code == 0, f"parley {command.line} failed: {result.output}"
        if command.shown:
            assert result.stdout.splitlines() == command.shown, f"parley {command.line}"
    shown = served.run("agent", "show", "scribe", "--json")
    assert '"warnings": 1' in shown.stdout
    assert '"lifecycle": "retired"' in served.run("agent", "show", "researcher-1", "--json").stdout


def test_the_team_tour_completes_the_task_through_its_subtasks(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_named_files(tmp_path)
    team = console_blocks()[-1]
    assert any("coordinator.py" in command.line for command in team)
    for command in team:
        assert served.run(*command.args(tmp_path)).exit_code == 0, command.line
    tasks = json.loads(served.run("task", "list", "--json").stdout)["items"]
    [task] = [task for task in tasks if task["agent"] == "host"]
    assert task["status"] == "done"
    shown = json.loads(served.run("task", "show", str(task["id"]), "--json").stdout)
    subtasks = shown["subtasks"]["items"]
    assert sorted(s["agent"] for s in subtasks) == ["brewer", "shopper"]
    assert all(s["status"] == "done" for s in subtasks)


def test_the_scripted_tour_does_what_the_readme_says(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_named_files(tmp_path)
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
    created = served.run("task", "create", "clerk", "count the spoons", "--json").stdout
    task = str(json.loads(created)["id"])
    assert _eventually(
        lambda: '"result": "42 spoons"' in served.run("task", "show", task, "--json").stdout
    )


def _eventually_reported(served: Served, text: str) -> bool:
    return _eventually(lambda: text in served.run("conversation", "show", "greeter").stdout)


def _eventually(check: Callable[[], bool]) -> bool:
    return bool(until(check, within=10))
