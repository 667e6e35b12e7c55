"""parley delivery …: the outbox — what waits for delivery, what arrived, what never will."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer

from parley.cli.output import console, reporting_errors, show, table
from parley.cli.state import JsonOption, client

app = typer.Typer(help="Deliveries: the outbox (owners only).", no_args_is_help=True)

# What fits 80 columns, each last error whole below; --json has the rest (key, mode,
# created_at, delivered_at).
COLUMNS = ["id", "kind", "state", "attempts", "next_attempt_at", "destination", "reason"]


class DeliveryState(StrEnum):
    """parley.deliveries.model's, whose module brings pydantic; a test keeps the two the same."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


def _render(page: Any) -> None:
    table(page["items"], COLUMNS, "no deliveries")
    _errors(page["items"])
    if page["next"] is not None:
        console.print(f"more: --before {page['next']}", markup=False)


def _errors(items: list[Any]) -> None:
    """Each item's last error whole, on a line of its own below the table: its code and its
    words, which a table column narrowed to the terminal (or to 80 columns, piped) would cut."""
    failing = [item for item in items if item["last_error"]]
    if failing:
        console.print("\nlast errors", markup=False)
    for item in failing:
        console.print(f"{item['id']} {item['state']}: {item['last_error']}", markup=False)


@app.command("list")
def list_deliveries(
    ctx: typer.Context,
    state: list[DeliveryState] | None = typer.Option(None, "--state", help="only these states"),
    limit: int = typer.Option(100, "--limit", help="at most this many, newest first"),
    before: str | None = typer.Option(None, "--before", help="the page after this cursor"),
    as_json: bool = JsonOption,
) -> None:
    """Deliveries newest first: state, attempts, next attempt, last error."""
    with reporting_errors():
        states = [s.value for s in state or []]
        page = client(ctx).get("/deliveries", state=states, limit=limit, before=before)
        show(page, as_json, _render)
