"""Every exit status the CLI uses is explained, in `parley --help` and in the README's table,
and each status a command's help or the README names is the one the code uses.
(Each status is exercised by its own test: 6 and 7, for instance, in test_commands.py and
test_runtime_commands.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from parley.cli.following import INTERRUPTED
from parley.cli.main import app as cli_app
from parley.cli.output import EXIT_CODES
from parley.errors import Conflict, TurnFailed

README = Path(__file__).parent.parent.parent / "README.md"


def test_help_and_readme_explain_every_exit_status() -> None:
    used = {0, 1, *EXIT_CODES.values()}
    shown = CliRunner().invoke(cli_app, ["--help"], env={"COLUMNS": "200"}).stdout
    in_help = {int(n) for n in re.findall(r"(\d) [a-z]", shown.partition("Exit status:")[2])}
    in_readme = {int(n) for n in re.findall(r"^\| (\d) \| ", README.read_text(), re.M)}
    assert in_help == used
    assert in_readme == used


# What a help text or the README says a command exits with, by the word after "N if (it was)".
MEANING = {"stopped": Conflict, "cancelled": Conflict, "failed": TurnFailed}
CLAIM = re.compile(r"\b(\d+) if (?:it (?:was )?)?(\w+)")


def _helps(command: Any, path: str = "parley") -> Iterator[tuple[str, str]]:
    """Every command's help and its options' helps, the lazily loaded commands too."""
    yield (
        path,
        " ".join([command.help or "", *(getattr(p, "help", "") or "" for p in command.params)]),
    )
    if isinstance(command, TyperGroup):
        ctx = typer.Context(command)
        for name in command.list_commands(ctx):
            yield from _helps(command.get_command(ctx, name), f"{path} {name}")


def test_the_exit_statuses_the_helps_and_readme_name_are_the_codes_used() -> None:
    texts = [*_helps(typer.main.get_command(cli_app)), ("README", README.read_text())]
    claims = [(where, int(n), word) for where, text in texts
              for n, word in CLAIM.findall(" ".join(text.split())) if word in MEANING]  # fmt: skip
    assert {where for where, _, _ in claims} >= {"parley run follow", "parley task create"}
    for where, number, word in claims:
        assert number == EXIT_CODES[MEANING[word]], (where, number, word)
    interrupted = [where for where, text in texts if re.search(r"exits? 130", text)]
    assert interrupted and INTERRUPTED == 130
