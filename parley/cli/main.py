"""The ``parley`` command: its global options and its commands (each module imported only
when its command is named; see parley.cli.group)."""

from __future__ import annotations

from typing import ClassVar

import typer

from parley import __version__
from parley.cli.group import Loader, ParleyGroup
from parley.cli.output import EXIT_STATUS_HELP
from parley.cli.state import CliState


def _agent_app() -> typer.Typer:
    from parley.cli import agent_conversations, agents

    if not any(c.name == "history" for c in agents.app.registered_commands):
        agents.app.command("history")(agent_conversations.history)
    return agents.app


class Parley(ParleyGroup):
    lazy: ClassVar[dict[str, Loader]] = {
        "serve": "parley.cli.serve:serve",
        "person": "parley.cli.people:app",
        "node": "parley.cli.nodes:app",
        "mesh": "parley.cli.mesh:app",
        "agent": _agent_app,
        "say": "parley.cli.talk:say",
        "chat": "parley.cli.talk:chat",
        "conversation": "parley.cli.talk:conversation_app",
        "task": "parley.cli.tasks:app",
        "run": "parley.cli.runs:app",
        "stop": "parley.cli.runs:stop",
        "turns": "parley.cli.runs:turns",
        "answer": "parley.cli.runs:answer",
        "approvals": "parley.cli.runs:approvals",
        "approve": "parley.cli.runs:approve",
        "deny": "parley.cli.runs:deny",
        "agent-conversation": "parley.cli.agent_conversations:app",
        "delivery": "parley.cli.deliveries:app",
        "binding": "parley.cli.bindings:app",
        "connection": "parley.cli.connections:app",
        "a2a": "parley.cli.a2a:app",
        "channel": "parley.cli.channels:app",
        "topic": "parley.cli.topics:app",
        "act": "parley.cli.act:app",
    }


app = typer.Typer(
    cls=Parley,
    help="Parley: a self-hosted home for persistent AI agents.",
    epilog=EXIT_STATUS_HELP,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _print_version(given: bool) -> None:
    if given:
        typer.echo(f"parley {__version__}")
        raise typer.Exit()


@app.callback()
def options(
    ctx: typer.Context,
    url: str | None = typer.Option(
        None,
        "--url",
        help="Parley's URL. Else PARLEY_URL, else the URL that the server running on the data"
        " folder (./parley-data, or PARLEY_DATA_DIR) wrote in private/server-url, else"
        " http://HOST:PORT of the settings (default http://127.0.0.1:8700)",
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        help="your API token [PARLEY_TOKEN: better there, since command lines are readable by"
        " every process]",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="print the version"
    ),
) -> None:
    ctx.obj = CliState(url=url, token=token)


def main() -> None:
    app()
