"""How the CLI shows results and errors: rich tables for people, JSON for scripts, exit codes."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import typer

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

if TYPE_CHECKING:  # rich is imported when something is printed: --help never needs it
    from rich.console import Console
    from rich.status import Status

# Where nobody sees the width (a pipe, a file), tables are laid out for 80 columns.
PIPED_WIDTH = 80
# A column whose cells are all this short, without spaces, is never wrapped (nor is a time).
SHORT = 24
# Narrower than this, a column of text is no longer read: the table is then wider than the room.
MIN_TEXT = 8

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
    a shell embedding the CLI) may run many commands. Printed to a pipe or a file, the width is
    ``PIPED_WIDTH`` (``COLUMNS`` still wins), not that of whatever terminal stdin happens to be."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr

    def print(self, *objects: Any, **options: Any) -> None:
        self._console().print(*objects, **options)

    def out(self, *objects: Any, **options: Any) -> None:
        self._console().out(*objects, **options)

    @property
    def width(self) -> int:
        return self._console().width

    def status(self, *args: Any, **options: Any) -> Status:
        return self._console().status(*args, **options)

    def _console(self) -> Console:
        from rich.console import Console

        stream = sys.stderr if self._stderr else sys.stdout
        piped = not stream.isatty() and not os.environ.get("COLUMNS", "").isdigit()
        width = PIPED_WIDTH if piped else None
        return Console(stderr=self._stderr, highlight=False, soft_wrap=True, width=width)


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
        say_error(exc.message)
        raise typer.Exit(exit_code_of(exc)) from exc


def say_note(message: str) -> None:
    """A line on stderr, as it is and at once: said while a second Ctrl-C may come, it must not
    wait for rich to load."""
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()


def say_error(message: str) -> None:
    """``error: …`` on stderr, as it is (no rich: a failed command need not load it)."""
    say_note(f"error: {message}")


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


def say_queued(what: str, run_id: int | None) -> None:
    """What a command that queues work prints when it does not wait for it: what it made and
    the run that takes it, ``task 7 (run 52 queued)`` (one that waits prints the reply)."""
    run = f"run {run_id} queued" if run_id is not None else "queued"
    console.print(f"{what} ({run})", markup=False)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], empty: str) -> None:
    """Rows under the given columns. A time (a ``…_at`` column) is shown short, in local time
    (``--json`` has it in full); a column of short words is never cut, and the columns of text
    share what width is left, wrapping rather than ending in "…"."""
    from rich.table import Table

    if not rows:
        console.print(empty)
        return
    headers = [_header(column) for column in columns]
    cells = [[_table_cell(column, row.get(column)) for column in columns] for row in rows]
    by_column = [[row[i] for row in cells] for i in range(len(columns))]
    natural = [_widest([header, *texts]) for header, texts in zip(headers, by_column, strict=True)]
    short = [_is_short(column, texts) for column, texts in zip(columns, by_column, strict=True)]
    floors = [max(len(header), MIN_TEXT) for header in headers]
    widths = _text_widths(natural, short, floors, console.width - 2 * (len(columns) - 1))
    grid = Table(box=None, pad_edge=False)
    for header, width, keep in zip(headers, widths, short, strict=True):
        grid.add_column(header, no_wrap=keep, overflow="fold", width=width)
    for line in cells:
        grid.add_row(*line)
    console.print(grid)


def _text_widths(
    natural: list[int], short: list[bool], floors: list[int], room: int
) -> list[int | None]:
    """Widths for the text columns (None: as wide as it needs), so that the row fits ``room``:
    short columns keep their width, and the text columns share the rest, a narrow one keeping
    its own width when that is less than its share, none narrower than its floor (its header)."""
    left = room - sum(width for width, keep in zip(natural, short, strict=True) if keep)
    text = sorted((width, i) for i, (width, keep) in enumerate(zip(natural, short, strict=True))
                  if not keep)  # fmt: skip
    if sum(width for width, _ in text) <= left:
        return [None] * len(natural)
    widths: list[int | None] = [None] * len(natural)
    for count, (width, i) in enumerate(text):
        share = max(left // (len(text) - count), floors[i])
        widths[i] = min(width, share)
        left -= widths[i] or 0
    return widths


def _widest(texts: list[str]) -> int:
    return max(len(line) for text in texts for line in text.splitlines() or [""])


def _is_short(column: str, texts: list[str]) -> bool:
    return _is_time(column) or all(len(text) <= SHORT and " " not in text for text in texts)


def _header(column: str) -> str:
    return column.removesuffix("_at") if _is_time(column) else column


def _is_time(column: str) -> bool:
    return column.endswith("_at")


def _table_cell(column: str, value: Any) -> str:
    if _is_time(column) and isinstance(value, str):
        return short_time(value)
    return _cell(value)


def short_time(iso: str) -> str:
    """ "12-03 20:21": an ISO time of the API, in this machine's time zone."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the API's times are UTC
    return moment.astimezone().strftime("%m-%d %H:%M")


def fields(row: dict[str, Any], names: Sequence[str]) -> None:
    """One record, a field a line: ``name  value``, a long value wrapped under itself."""
    width = max(len(name) for name in names)
    room = max(console.width - width - 2, MIN_TEXT)
    for name in names:
        lines = _wrapped(_cell(row.get(name)), room)
        console.print(f"{name.ljust(width)}  {lines[0]}", markup=False)
        for line in lines[1:]:
            console.print(f"{'':{width}}  {line}", markup=False)


def _wrapped(text: str, room: int) -> list[str]:
    """``text`` in lines of at most ``room`` characters, at spaces; its own lines kept, and a
    word longer than that (a path, a URL) kept whole."""
    lines = [
        wrapped
        for line in text.splitlines()
        for wrapped in textwrap.wrap(line, room, break_long_words=False) or [""]
    ]
    return lines or [""]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "-"
    return str(value)
