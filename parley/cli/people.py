"""parley person …"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from parley.cli.output import console, reporting_errors, show, show_page, table
from parley.cli.state import BeforeOption, JsonOption, LimitOption, client
from parley.errors import Invalid

app = typer.Typer(help="People: owners and members, and their API tokens.", no_args_is_help=True)


def _token_shown_once(heading: str) -> Callable[[Any], None]:
    """Render a {person, token} answer: a heading filled from the person, then the bare token."""

    def render(data: Any) -> None:
        console.print(heading.format(**data["person"]) + " (shown once):", markup=False)
        console.print(data["token"], markup=False)

    return render


@app.command("add")
def add(
    ctx: typer.Context,
    name: str,
    owner: bool = typer.Option(False, "--owner", help="may hire, retire, warn and add people"),
    member: bool = typer.Option(False, "--member", help="talks to agents and gives them work"),
    as_json: bool = JsonOption,
) -> None:
    """Add a person and print their API token (shown once)."""
    with reporting_errors():
        if owner == member:
            raise Invalid("say exactly one of --owner or --member")
        role = "owner" if owner else "member"
        created = client(ctx).post("/people", {"name": name, "role": role})
        show(created, as_json, _token_shown_once("added {role} {name}; their API token"))


@app.command("token")
def token(ctx: typer.Context, name: str, as_json: bool = JsonOption) -> None:
    """Issue a new API token for a person (owners, or yourself); the old one stops working."""
    with reporting_errors():
        issued = client(ctx).post(f"/people/{name}/token", {})
        show(issued, as_json, _token_shown_once("new API token for {name}"))


@app.command("list")
def list_people(
    ctx: typer.Context,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """List the people of this installation, by name."""
    with reporting_errors():
        people = client(ctx).get("/people", limit=limit, before=before)
        show_page(
            people, as_json, lambda rows: table(rows, ["name", "role", "created_at"], "nobody yet")
        )
