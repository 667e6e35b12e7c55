"""parley topic …: any topic you may read by its id, and its text page by page."""

from __future__ import annotations

import typer

from parley.cli.output import reporting_errors, show, show_page
from parley.cli.state import BeforeOption, JsonOption, LimitOption, client
from parley.cli.talk import render_detail, render_messages

app = typer.Typer(
    help="Topics by id: conversations, tasks, agent conversations, node exchanges.",
    no_args_is_help=True,
)


@app.command("show")
def show_topic(ctx: typer.Context, topic_id: int, as_json: bool = JsonOption) -> None:
    """A topic you may read: its latest messages, runs, subtasks and agent conversations."""
    with reporting_errors():
        show(client(ctx).get(f"/topics/{topic_id}"), as_json, render_detail)


@app.command("messages")
def messages(
    ctx: typer.Context,
    topic_id: int,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """A topic's messages, a page at a time from the newest (each page shown oldest first)."""
    with reporting_errors():
        page = client(ctx).get(f"/topics/{topic_id}/messages", limit=limit, before=before)
        show_page(page, as_json, render_messages)
