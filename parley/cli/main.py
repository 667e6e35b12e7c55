"""The ``parley`` command."""

from __future__ import annotations

import typer

from parley import __version__
from parley.cli import (
    act,
    agent_conversations,
    agents,
    bindings,
    channels,
    connections,
    deliveries,
    nodes,
    people,
    runs,
    talk,
    tasks,
    topics,
)
from parley.cli.output import EXIT_STATUS_HELP
from parley.cli.serve import serve
from parley.cli.state import CliState

app = typer.Typer(
    help="Parley: a self-hosted home for persistent AI agents.",
    epilog=EXIT_STATUS_HELP,
    no_args_is_help=True,
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
    token: str | None = typer.Option(None, "--token", help="your API token [PARLEY_TOKEN]"),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="print the version"
    ),
) -> None:
    ctx.obj = CliState(url=url, token=token)


app.command("serve")(serve)
app.add_typer(people.app, name="person")
app.add_typer(nodes.app, name="node")
agents.app.command("history")(agent_conversations.history)
app.add_typer(agents.app, name="agent")
app.command("say")(talk.say)
app.command("chat")(talk.chat)
app.add_typer(talk.conversation_app, name="conversation")
app.add_typer(tasks.app, name="task")
app.add_typer(runs.app, name="run")
app.command("stop")(runs.stop)
app.command("turns")(runs.turns)
app.command("answer")(runs.answer)
app.add_typer(agent_conversations.app, name="agent-conversation")
app.add_typer(deliveries.app, name="delivery")
app.add_typer(bindings.app, name="binding")
app.add_typer(connections.app, name="connection")
app.add_typer(channels.app, name="channel")
app.add_typer(topics.app, name="topic")
app.add_typer(act.app, name="act")


def main() -> None:
    app()
