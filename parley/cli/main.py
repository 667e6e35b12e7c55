"""The ``parley`` command."""

from __future__ import annotations

import typer

from parley.cli import agents, nodes, people
from parley.cli.serve import serve
from parley.cli.state import CliState

app = typer.Typer(
    help="Parley: a self-hosted home for persistent AI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def options(
    ctx: typer.Context,
    url: str | None = typer.Option(None, "--url", help="Parley's URL [PARLEY_URL]"),
    token: str | None = typer.Option(None, "--token", help="your API token [PARLEY_TOKEN]"),
) -> None:
    ctx.obj = CliState(url=url, token=token)


app.command("serve")(serve)
app.add_typer(people.app, name="person")
app.add_typer(nodes.app, name="node")
app.add_typer(agents.app, name="agent")


def main() -> None:
    app()
