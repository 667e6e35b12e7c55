"""parley binding …: channel conversations bound to sessions (owners only)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer

from parley.cli.output import console, reporting_errors, show, table
from parley.cli.state import JsonOption, client
from parley.errors import Invalid

app = typer.Typer(
    help="Bindings: channel conversations bound to sessions (owners only).", no_args_is_help=True
)

# What fits 80 columns; --json has the rest (target_kind, bound_by, bound_at).
COLUMNS = ["id", "session", "conversation", "status", "last_activity_at", "expires_at",
           "ended_reason"]  # fmt: skip


class BindingStatus(StrEnum):
    """parley.channels.model's, whose module the CLI does not load; a test keeps them equal."""

    ACTIVE = "active"
    ENDING = "ending"
    ENDED = "ended"


def _place(ref: dict[str, Any]) -> str:
    place = f"{ref['channel']}:{ref['account_id']}:{ref['conversation_id']}"
    parent = ref.get("parent_conversation_id")
    return place if parent is None else f"{place} (in {parent})"


def _rows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item | {"conversation": _place(item["conversation"])} for item in items]


def _render(page: Any) -> None:
    table(_rows(page["items"]), COLUMNS, "no bindings")
    if page["next"] is not None:
        console.print(f"more: --before {page['next']}", markup=False)


@app.command("list")
def list_bindings(
    ctx: typer.Context,
    status: list[BindingStatus] | None = typer.Option(None, "--status", help="only these"),
    session: str | None = typer.Option(None, "--session", help="only this session (topic:ID)"),
    limit: int = typer.Option(100, "--limit", help="at most this many, newest first"),
    before: str | None = typer.Option(None, "--before", help="the page after this cursor"),
    as_json: bool = JsonOption,
) -> None:
    """Bindings newest first: session, conversation, status, who bound it, why it ended."""
    with reporting_errors():
        statuses = [s.value for s in status or []]
        page = client(ctx).get(
            "/bindings", status=statuses, session=session, limit=limit, before=before
        )
        show(page, as_json, _render)


@app.command("unbind")
def unbind(
    ctx: typer.Context,
    binding: int | None = typer.Argument(None, help="the binding to end"),
    session: str | None = typer.Option(None, "--session", help="or every binding of a session"),
    reason: str = typer.Option("unbound", "--reason", help="why, kept on the binding"),
    as_json: bool = JsonOption,
) -> None:
    """End a binding (or every binding of a session) with a reason."""
    with reporting_errors():
        if (binding is None) == (session is None):
            raise Invalid("give a binding ID or --session topic:ID, not both")
        body = {"binding": binding, "session": session, "reason": reason}
        ended = client(ctx).post("/bindings/unbind", body)
        show(ended, as_json, _render_ended)


def _render_ended(ended: list[dict[str, Any]]) -> None:
    if not ended:
        console.print("nothing to end: no live binding there", markup=False)
    for item in ended:
        where = _place(item["conversation"])
        console.print(f"ended binding {item['id']} ({where}): {item['ended_reason']}", markup=False)
