"""Every exit status the CLI uses is explained, in `parley --help` and in the README's table.
(Each status is exercised by its own test: 6 and 7, for instance, in test_commands.py and
test_runtime_commands.py.)"""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from parley.cli.main import app as cli_app
from parley.cli.output import EXIT_CODES

README = Path(__file__).parent.parent.parent / "README.md"


def test_help_and_readme_explain_every_exit_status() -> None:
    used = {0, 1, *EXIT_CODES.values()}
    shown = CliRunner().invoke(cli_app, ["--help"], env={"COLUMNS": "200"}).stdout
    in_help = {int(n) for n in re.findall(r"(\d) [a-z]", shown.partition("Exit status:")[2])}
    in_readme = {int(n) for n in re.findall(r"^\| (\d) \| ", README.read_text(), re.M)}
    assert in_help == used
    assert in_readme == used
