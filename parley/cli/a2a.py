"""parley a2a …: who reaches this installation's agents over A2A (owners) — the agents exposed,
and the clients let in, each with a token shown once."""

from __future__ import annotations

from typing import Any

import typer

from parley.cli.output import console, fields, reporting_errors, show, table
from parley.cli.state import JsonOption, client

app = typer.Typer(
    help="Agents over A2A: expose, hide, list; clients: add, list, remove (owners).",
    no_args_is_help=True,
)
clients_app = typer.Typer(help="A2A clients: add (a token, shown once), list, remove.")
app.add_typer(clients_app, name="client")

AGENT_COLUMNS = ["agent", "card_url", "exposed_at"]
CLIENT_COLUMNS = ["name", "created_by", "created_at", "removed_at"]


@app.command("expose")
def expose(
    ctx: typer.Context,
    agent: str = typer.Argument(..., help="the agent A2A clients may reach"),
    as_json: bool = JsonOption,
) -> None:
    """Expose an agent over A2A: its card is at /a2a/AGENT/.well-known/agent-card.json, its
    endpoint at /a2a/AGENT (JSON-RPC) and /a2a/AGENT/rest (HTTP+JSON)."""
    with reporting_errors():
        made = client(ctx).post("/a2a/agents", {"agent": agent})
        show(made, as_json, lambda row: fields(row, AGENT_COLUMNS))


@app.command("hide")
def hide(ctx: typer.Context, agent: str = typer.Argument(..., help="an exposed agent")) -> None:
    """Hide an agent from A2A: its card and endpoint answer 404 from now on."""
    with reporting_errors():
        client(ctx).delete(f"/a2a/agents/{agent}")
        console.print(f"{agent} is no longer reachable over A2A", markup=False)


@app.command("agents")
def agents(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """The agents exposed over A2A, with their cards' URLs."""
    with reporting_errors():
        page = client(ctx).get("/a2a/agents")
        show(page, as_json, lambda data: table(data["items"], AGENT_COLUMNS, "no agent exposed"))


@clients_app.command("add")
def add(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="what this installation calls the client"),
    as_json: bool = JsonOption,
) -> None:
    """Let an A2A client in: its token, shown this once, reaches every exposed agent."""
    with reporting_errors():
        made = client(ctx).post("/a2a/clients", {"name": name})
        show(made, as_json, _render_added)


def _render_added(made: Any) -> None:
    console.print(made["token"], markup=False, soft_wrap=True)
    console.print(
        f"Give this token to {made['name']}: it sends 'Authorization: Bearer TOKEN'. It is shown"
        " this once; 'parley a2a client remove' stops it.",
        style="dim",
        markup=False,
    )


@clients_app.command("list")
def list_clients(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """A2A clients, removed ones too."""
    with reporting_errors():
        page = client(ctx).get("/a2a/clients")
        show(page, as_json, lambda data: table(data["items"], CLIENT_COLUMNS, "no A2A client"))


@clients_app.command("remove")
def remove(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="the client"),
    as_json: bool = JsonOption,
) -> None:
    """Remove an A2A client: its token stops at once, its contexts close and their turns stop."""
    with reporting_errors():
        row = client(ctx).delete(f"/a2a/clients/{name}")
        show(row, as_json, lambda data: fields(data, CLIENT_COLUMNS))
