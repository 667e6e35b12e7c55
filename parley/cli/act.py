"""parley act …: what a running turn does, from inside a command brain's process.

These commands authenticate with the run's token (``PARLEY_RUN_TOKEN``), never with a person's:
the hub derives the topic from the run, so without a run there is nothing to act in.
"""

from __future__ import annotations

import os
from typing import Any

import typer

from parley.cli.client import ApiClient
from parley.cli.output import console, reporting_errors, show
from parley.cli.state import CliState, JsonOption, given_text
from parley.errors import Unauthorized
from parley.settings import load_settings

app = typer.Typer(
    help="Act from a running turn (a command brain's process): PARLEY_RUN_TOKEN authorises.",
    no_args_is_help=True,
)

TEXT_HELP = 'the text; "-" reads it from stdin'


def _run_client(ctx: typer.Context) -> ApiClient:
    token = os.environ.get("PARLEY_RUN_TOKEN", "").strip()
    if not token:
        raise Unauthorized("a role token without a run has no topic: PARLEY_RUN_TOKEN is not set")
    state = ctx.find_root().obj
    url = state.url if isinstance(state, CliState) else None
    return ApiClient(url or os.environ.get("PARLEY_URL") or load_settings().base_url, token)


def _act(ctx: typer.Context, action: str, body: dict[str, Any], as_json: bool) -> None:
    with reporting_errors():
        answer = _run_client(ctx).post(f"/act/{action}", body)
        show(answer, as_json, lambda data: console.print(data["result"], markup=False))


@app.command("send")
def send(
    ctx: typer.Context,
    to: str = typer.Argument(..., help="a local agent, or name@connection for a peer role"),
    text: str = typer.Argument(..., help=TEXT_HELP),
    as_json: bool = JsonOption,
) -> None:
    """Send text to another role, in the agent conversation of this run's root."""
    _act(ctx, "send", {"to": to, "text": given_text(text)}, as_json)


@app.command("report")
def report(
    ctx: typer.Context, text: str = typer.Argument(..., help=TEXT_HELP), as_json: bool = JsonOption
) -> None:
    """Report to the root this run answers for (a person's conversation or a task)."""
    _act(ctx, "report", {"text": given_text(text)}, as_json)


@app.command("spawn")
def spawn(
    ctx: typer.Context,
    agent: str,
    text: str = typer.Argument(..., help=TEXT_HELP),
    thread: bool = typer.Option(False, "--thread", help="bind the subtask to a thread"),
    as_json: bool = JsonOption,
) -> None:
    """Give another agent a subtask of this run's task."""
    _act(ctx, "spawn", {"agent": agent, "text": given_text(text), "thread": thread}, as_json)


@app.command("complete")
def complete(
    ctx: typer.Context,
    result: str = typer.Argument(..., help=TEXT_HELP),
    failed: bool = typer.Option(False, "--failed", help="the task failed"),
    as_json: bool = JsonOption,
) -> None:
    """Complete the task this run works on, with its result."""
    _act(ctx, "complete", {"result": given_text(result), "failed": failed}, as_json)


@app.command("remember")
def remember(
    ctx: typer.Context, note: str = typer.Argument(..., help=TEXT_HELP), as_json: bool = JsonOption
) -> None:
    """Add a note to this agent's memory."""
    _act(ctx, "remember", {"note": given_text(note)}, as_json)


@app.command("ask-node")
def ask_node(
    ctx: typer.Context,
    node: str,
    text: str = typer.Argument(..., help=TEXT_HELP),
    as_json: bool = JsonOption,
) -> None:
    """Ask a node's own session; its answer arrives later as new text."""
    _act(ctx, "ask-node", {"node": node, "text": given_text(text)}, as_json)
