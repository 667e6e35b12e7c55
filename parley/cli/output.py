"""How the CLI shows results and errors: rich tables for people, JSON for scripts, exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.status import Status
from rich.table import Table

from parley.errors import (
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    ParleyError,
    TurnFailed,
    Unauthorized,
    Unavailable,
)

# The one place errors become exit codes.
EXIT_CODES: dict[type[ParleyError], int] = {
    Invalid: 2,
    NotFound: 3,
    Conflict: 4,
    Forbidden: 5,
    Unauthorized: 5,
    Unavailable: 6,
    TurnFailed: 7,
}
# What each exit status means, for `parley --help` (the README has the same table).
EXIT_STATUS_HELP = """Exit status: 0 done; 1 an unexpected error; 2 invalid input or usage;
3 not found; 4 conflict with the current state (a stopped turn too); 5 not allowed, or no valid
token; 6 server or node unreachable; 7 the turn or task waited for failed
(its reason on stderr)."""


class Terminal:
    """Where the CLI prints: a rich Console made at each use, so that its width is the terminal's
    (or ``COLUMNS``) when the command prints, not when this module was first imported — a rich
    Console fixes its size from the environment it is made in, and one process (a test suite,
    a shell embedding the CLI) may run many commands."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr

    def print(self, *objects: Any, **options: Any) -> None:
        self._console().print(*objects, **options)

    def out(self, *objects: Any, **options: Any) -> None:
        self._console().out(*objects, **options)

    def status(self, *args: Any, **options: Any) -> Status:
        return self._console().status(*args, **options)

    def _console(self) -> Console:
        return Console(stderr=self._stderr, highlight=False, soft_wrap=True)


console = Terminal()
errors = Terminal(stderr=True)


def exit_code_of(error: ParleyError) -> int:
    for cls in type(error).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return 1


@contextmanager
def reporting_errors() -> Iterator[None]:
    try:
        yield
    except ParleyError as exc:
        errors.print(f"error: {exc.message}", markup=False)
        raise typer.Exit(exit_code_of(exc)) from exc


def show_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")


def show(data: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    if as_json:
        show_json(data)
    else:
        render(data)


def show_page(page: Any, as_json: bool, render: Callable[[list[Any]], None]) -> None:
    """A page of a list: as it came with --json; else its rows, then, when there is more, the
    option that shows the next page."""
    if as_json:
        show_json(page)
        return
    render(page["items"])
    more_hint(page["next"])


def more_hint(cursor: str | None, command: str = "") -> None:
    """A dim line saying how to read on: ``more: [COMMAND] --before CURSOR``."""
    if cursor:
        prefix = f"{command} " if command else ""
        console.print(f"more: {prefix}--before {cursor}", style="dim", markup=False)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], empty: str) -> None:
    if not rows:
        console.print(empty)
        return
    grid = Table(*columns, box=None, pad_edge=False)
    for row in rows:
        grid.add_row(*(_cell(row.get(column)) for column in columns))
    console.print(grid)


def fields(row: dict[str, Any], names: Sequence[str]) -> None:
    width = max(len(name) for name in names)
    for name in names:
        console.print(f"{name.ljust(width)}  {_cell(row.get(name))}", markup=False)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "-"
    return str(value)
