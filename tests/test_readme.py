"""The README's tour is run, command by command, against a real server."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.served import Served

README = Path(__file__).parent.parent / "README.md"


def tour_commands() -> list[list[str]]:
    block = re.search(r"```console\n(.*?)```", README.read_text(), re.S)
    assert block, "the README lost its tour"
    lines = [
        line.removeprefix("$ ") for line in block.group(1).splitlines() if line.startswith("$ ")
    ]
    return [shlex.split(line)[1:] for line in lines]  # drop '.venv/bin/parley'


def test_every_command_of_the_tour_works(served: Served) -> None:
    commands = tour_commands()
    assert len(commands) >= 10
    for args in commands:
        result = served.run(*args)
        assert result.exit_code == 0, f"parley {' '.join(args)} failed: {result.output}"
    shown = served.run("agent", "show", "scribe", "--json")
    assert '"warnings": 1' in shown.stdout
    assert '"lifecycle": "retired"' in served.run("agent", "show", "researcher-1", "--json").stdout
