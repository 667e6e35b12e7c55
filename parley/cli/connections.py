"""parley connection …: links to peer installations — invite, accept, list, expose, pause,
unpause, revoke, limit (owners)."""

from __future__ import annotations

from typing import Any

import typer

from parley.cli.output import console, fields, reporting_errors, show, table
from parley.cli.secret_files import read_secret
from parley.cli.state import JsonOption, client

app = typer.Typer(
    help="Connections to peer installations: invite, accept, list, expose, pause, revoke (owners).",
    no_args_is_help=True,
)

# What fits 80 columns; connection show and --json have the rest (failures, exposed).
COLUMNS = ["name", "state", "queued", "last_contact_at", "retry_at", "parked", "last_error"]
SHOWN = ["name", "url", "state", "exposed", "queued", "last_contact_at"]
SHOWN_A2A = ["name", "kind", "url", "roles", "state"]


@app.command("invite")
def invite(
    ctx: typer.Context,
    name: str = typer.Option(..., "--name", help="what this side will call the connection"),
    expires: str = typer.Option("24h", "--expires", help="how long the code is good: 90s, 2h…"),
    as_json: bool = JsonOption,
) -> None:
    """Make an invite code for a peer installation's owner: good once, until it expires.
    The code holds this installation's public URL (serve --public-url)."""
    with reporting_errors():
        made = client(ctx).post("/connections/invites", {"name": name, "expires": expires})
        show(made, as_json, _render_invite)


def _render_invite(made: Any) -> None:
    console.print(made["code"], markup=False, soft_wrap=True)
    console.print(
        f"Give this code to the peer's owner: parley connection accept CODE --name NAME."
        f" It works once, until {made['expires_at']}.",
        style="dim",
        markup=False,
    )


@app.command("accept")
def accept(
    ctx: typer.Context,
    code: str = typer.Argument(..., help="the invite code the peer's owner gave you"),
    name: str = typer.Option(..., "--name", help="what this side will call the connection"),
    as_json: bool = JsonOption,
) -> None:
    """Accept a peer's invite code: both installations then hold the connection."""
    with reporting_errors():
        made = client(ctx).post("/connections", {"code": code, "name": name})
        show(made, as_json, lambda row: fields(row, SHOWN))


@app.command("add-a2a")
def add_a2a(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="what this side calls the agent"),
    url: str = typer.Argument(..., help="the agent's URL: its card is at URL/.well-known/…"),
    token_file: str | None = typer.Option(
        None, "--token-file", help="a file holding the bearer token the agent asks for ('-': stdin)"
    ),
    as_json: bool = JsonOption,
) -> None:
    """Add an A2A agent as a connection: its card is read now, and its skills become roles
    your agents address as ROLE@NAME."""
    with reporting_errors():
        body: dict[str, Any] = {"name": name, "url": url}
        if token_file is not None:
            body["token"] = read_secret(token_file)
        made = client(ctx).post("/connections/a2a", body)
        show(made, as_json, lambda row: fields(row, [*SHOWN_A2A]))


@app.command("list")
def list_connections(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Connections: state, frames waiting, last contact, backoff, parked threads, exposed
    agents."""
    with reporting_errors():
        page = client(ctx).get("/connections")
        show(page, as_json, lambda data: table(data["items"], COLUMNS, "no connections"))


@app.command("expose")
def expose(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="the connection"),
    agents: list[str] | None = typer.Argument(
        None, help="the local agents its peer may address (none: no agent)"
    ),
    as_json: bool = JsonOption,
) -> None:
    """Choose which local agents the peer may address: exactly these, from now on."""
    with reporting_errors():
        row = client(ctx).put(f"/connections/{name}/exposed", {"agents": agents or []})
        show(row, as_json, lambda data: fields(data, SHOWN))


@app.command("pause")
def pause(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="the connection"),
    as_json: bool = JsonOption,
) -> None:
    """Pause a connection on this side: every run of its conversations stops, text waiting to
    be sent fails (its sender is told), roles cannot send on it and the peer's text is refused
    as 'paused'. Reversible with unpause."""
    with reporting_errors():
        row = client(ctx).post(f"/connections/{name}/pause", {})
        show(row, as_json, lambda data: fields(data, SHOWN))


@app.command("unpause")
def unpause(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="the connection"),
    as_json: bool = JsonOption,
) -> None:
    """Unpause a paused connection: text goes both ways again. Nothing stopped restarts."""
    with reporting_errors():
        row = client(ctx).post(f"/connections/{name}/unpause", {})
        show(row, as_json, lambda data: fields(data, SHOWN))


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="the connection"),
    as_json: bool = JsonOption,
) -> None:
    """Revoke a connection for good: both tokens die at the peer's next contact, its
    conversations close, and it can never be unpaused or used again."""
    with reporting_errors():
        row = client(ctx).post(f"/connections/{name}/revoke", {})
        show(row, as_json, lambda data: fields(data, SHOWN))


@app.command("limit")
def limit(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="the connection"),
    frames: int | None = typer.Argument(
        None, min=1, help="text that may wait on it, each way (none: the setting's default)"
    ),
    as_json: bool = JsonOption,
) -> None:
    """Set the connection's queue limit: past it a send on it fails at once with queue_full,
    and the peer's text is refused as queue_full while that much waits here for our agents.
    Without a number, the setting federation_queue_limit applies again."""
    with reporting_errors():
        row = client(ctx).put(f"/connections/{name}/queue-limit", {"queue_limit": frames})
        show(row, as_json, lambda data: fields(data, [*SHOWN, "queue_limit"]))
