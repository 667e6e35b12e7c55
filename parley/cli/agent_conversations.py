"""parley agent-conversation …, parley agent history: what passes between roles."""

from __future__ import annotations

from typing import Any

import typer

from parley.cli.output import console, more_hint, reporting_errors, show, show_page, table
from parley.cli.state import BeforeOption, JsonOption, LimitOption, client

app = typer.Typer(
    help="Agent conversations: one exchange about one topic between two roles.",
    no_args_is_help=True,
)

COLUMNS = ["sender", "agent", "status", "root"]


@app.command("list")
def list_agent_conversations(
    ctx: typer.Context,
    include_closed: bool = typer.Option(False, "--all", help="closed ones too"),
    root: int | None = typer.Option(None, "--root", help="only those rooted in this topic"),
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """The agent conversations you may read (their root decides who may), newest first."""
    with reporting_errors():
        page = client(ctx).get(
            "/agent-conversations",
            include_closed=include_closed,
            root=root,
            limit=limit,
            before=before,
        )
        columns = [*COLUMNS, "closed_reason"] if include_closed else COLUMNS
        show_page(page, as_json, lambda rows: _render_list(rows, columns))


def _render_list(rows: list[Any], columns: list[str]) -> None:
    """Like the other tables, but the thread ID is never cut: it is what `show` takes."""
    from rich.table import Table  # rich when printing: --help never loads it
    from rich.text import Text

    if not rows:
        console.print("no agent conversations")
        return
    grid = Table(box=None, pad_edge=False)
    grid.add_column("thread_id", no_wrap=True, min_width=len(rows[0]["thread_id"]))
    for column in columns:
        grid.add_column(column)
    for row in rows:
        grid.add_row(Text(row["thread_id"]), *(Text(str(row[c] or "-")) for c in columns))
    console.print(grid)


@app.command("show")
def show_agent_conversation(ctx: typer.Context, thread_id: str, as_json: bool = JsonOption) -> None:
    """One agent conversation: its text and its runs."""
    from parley.cli.talk import render_detail  # here: `agent …` holds `history`, not this

    with reporting_errors():
        show(client(ctx).get(f"/agent-conversations/{thread_id}"), as_json, render_detail)


@app.command("stop")
def stop(ctx: typer.Context, thread_id: str, as_json: bool = JsonOption) -> None:
    """Stop the agent's turn in an agent conversation (the session is kept)."""
    from parley.cli.runs import say_stopped

    with reporting_errors():
        answer = client(ctx).post(f"/agent-conversations/{thread_id}/stop", {})
        nothing = f"nothing was running in {thread_id}"
        show(answer, as_json, lambda data: say_stopped(data["stopped"], nothing))


def history(
    ctx: typer.Context,
    role: str,
    peer: str,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Everything between a role and a peer role that you may read, one conversation at a time,
    newest first."""
    with reporting_errors():
        page = client(ctx).get(f"/agents/{role}/history/{peer}", limit=limit, before=before)
        show_page(page, as_json, lambda details: _render_history(details, role, peer))


def _render_history(details: list[Any], role: str, peer: str) -> None:
    from rich.markup import escape

    if not details:
        console.print(f"nothing between {role} and {peer} that you may read", markup=False)
    for detail in details:
        topic = detail["topic"]
        console.print(f"\n[bold]{escape(topic['thread_id'])}[/bold] — for {escape(topic['root'])}")
        messages = list(reversed(detail["messages"]["items"]))
        table(messages, ["author", "recipient", "body"], "no messages")
        more_hint(detail["messages"]["next"], f"parley topic messages {topic['id']}")
