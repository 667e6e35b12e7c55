"""parley node …"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from parley.cli.output import console, fields, reporting_errors, show, show_page, table
from parley.cli.state import BeforeOption, JsonOption, LimitOption, client, given_text
from parley.cli.talk import TEXT_HELP, converse, render_messages

app = typer.Typer(
    help="Nodes: the machines of the mesh, the credentials they join with, their node sessions.",
    no_args_is_help=True,
)

NODE_FIELDS = [
    "name",
    "status",
    "last_seen_at",
    "hostname",
    "agents",
    "running",
    "session",
    "workspace_root",
    "joined_at",
    "engram",
]


@app.command("join")
def join(
    name: str = typer.Argument(..., help="this node's name in the mesh (as issued on the hub)"),
    broker: str = typer.Option(
        ..., "--broker", envvar="PARLEY_BROKER", help="the hub's broker: nats://HOST:4222"
    ),
    credentials: Path | None = typer.Option(
        None,
        "--credentials",
        help="the node's .creds file from `parley node add NAME` (mode 0600); or its text in"
        " PARLEY_NODE_CREDENTIALS",
    ),
    workspaces: Path | None = typer.Option(
        None, "--workspaces", help="where its agents' workspaces go; default DATA_DIR/workspaces"
    ),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="default ./parley-data [PARLEY_DATA_DIR]"
    ),
    log_level: str | None = typer.Option(None, "--log-level", help="debug|info|warning|error"),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="take the name from the node online under it (that one stops; its turns run here)",
    ),
    join_token: str | None = typer.Option(None, "--join-token", hidden=True),
) -> None:
    """Run this machine as node NAME of a hub's mesh (no store of its own), with the
    credentials the hub's owner issued for it: it registers, keeps a heartbeat, and runs its
    agents' turns here until SIGTERM or Ctrl-C. Model brains call their provider from here, with
    this machine's settings (PARLEY_OPENAI_API_KEY, …). A name online already is refused, naming
    the one that has it, unless --replace; the hub's own node's name never is given."""
    # Loaded here only: every other command starts without the node's machinery.
    from parley.cli.event_loop import leave_at_once, loading_for_good

    with loading_for_good():
        from parley.brains.confinement import hiding_from_brains
        from parley.cli.creds_file import CREDENTIALS_ENV, read_creds
        from parley.cli.joining import run_node
        from parley.datafolder import DataFolder
        from parley.errors import Invalid
        from parley.process_secrets import protect_process, take_env_secret
        from parley.settings import load_settings

    protect_process()  # before any secret is in memory: no brain reads it from /proc
    from_env = take_env_secret(CREDENTIALS_ENV)
    with reporting_errors():
        if join_token is not None:
            raise Invalid(
                "--join-token is retired: on the hub run `parley node add NAME`, copy the file"
                " it writes here, and join with --credentials FILE"
            )
        creds = read_creds(credentials, from_env)
        settings = load_settings(node_name=name, data_dir=data_dir, log_level=log_level)
        if credentials is not None:  # wherever it is, its brains cannot read it
            settings = hiding_from_brains(settings, credentials)
        place = workspaces or DataFolder(settings.data_dir).workspaces
        run_node(settings, broker, creds, place, replace)
    leave_at_once()


@app.command("add")
def add(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="the node's name in the mesh"),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="revoke the name's credentials first (its node is cut off), and overwrite --out",
    ),
    out: Path | None = typer.Option(
        None, "--out", help="where to write them; default ./NAME.creds"
    ),
) -> None:
    """Issue the credentials a machine joins the mesh with as node NAME (owners): written to a
    file readable by you only, to copy to that machine (they are shown once; the hub keeps
    only their public key). A name that has credentials is refused unless --replace."""
    from parley.cli.creds_file import creds_path, refuse_overwrite, write_creds

    with reporting_errors():
        path = creds_path(name, out)
        refuse_overwrite(path, replace)
        issued = client(ctx).post(f"/nodes/{name}/credentials", {"replace": replace})
        write_creds(path, issued["creds"])
        broker = client(ctx).get("/mesh/broker")["url"] or "nats://HUB:4222"
        console.print(
            f"credentials of node {name} written to {path} (mode 0600, shown nowhere else);"
            " copy it to the node's machine and run there:",
            markup=False,
        )
        console.print(
            f"  parley node join {name} --broker {broker} --credentials {path.name}", markup=False
        )


@app.command("remove")
def remove(ctx: typer.Context, name: str) -> None:
    """Revoke node NAME's credentials (owners): the broker cuts it off at once, its running
    turns end as a lost node's, and the name may be issued again."""
    with reporting_errors():
        client(ctx).delete(f"/nodes/{name}/credentials")
        console.print(f"node {name} removed: its credentials are revoked", markup=False)


@app.command("list")
def list_nodes(
    ctx: typer.Context,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Each node by name: online or offline (and when last heard), its host, how many agents it
    has and how many of their turns run there now; then the broker between them and the hub."""
    with reporting_errors():
        nodes = client(ctx).get("/nodes", limit=limit, before=before)
        show_page(
            nodes,
            as_json,
            lambda rows: table(
                rows,
                ["name", "status", "hostname", "agents", "running", "last_seen_at"],
                "no nodes",
            ),
        )
        if not as_json:
            console.print(broker_line(client(ctx).get("/mesh/broker")), markup=False)


def broker_line(broker: dict[str, Any]) -> str:
    """``broker nats://hub:4222: reconnecting (connection refused)``"""
    where, status, error = broker["url"] or "in process", broker["status"], broker["last_error"]
    why = f" ({error})" if status != "connected" and error else ""
    return f"broker {where}: {status}{why}"


@app.command("show")
def show_node(ctx: typer.Context, name: str, as_json: bool = JsonOption) -> None:
    """One node in full, engram included."""
    with reporting_errors():
        show(client(ctx).get(f"/nodes/{name}"), as_json, lambda row: fields(row, NODE_FIELDS))


@app.command("engram")
def engram(
    ctx: typer.Context,
    name: str,
    text: str = typer.Argument(..., help='the engram; "-" reads it from stdin'),
    as_json: bool = JsonOption,
) -> None:
    """Set the node's engram: the system prompt of its node session."""
    with reporting_errors():
        node = client(ctx).put(f"/nodes/{name}/engram", {"engram": given_text(text)})

        def render(row: Any) -> None:
            fields(row, ["name", "engram"])

        show(node, as_json, render)


@app.command("ask")
def ask(
    ctx: typer.Context,
    name: str,
    text: str = typer.Argument(..., help=TEXT_HELP),
    as_json: bool = JsonOption,
) -> None:
    """Ask a node's own session and wait for its answer (it answers callers one at a time)."""
    with reporting_errors():
        converse(client(ctx), f"/nodes/{name}/ask", given_text(text), as_json)


@app.command("exchanges")
def exchanges(
    ctx: typer.Context,
    name: str,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Everything the node session was asked, by whom, and what it answered (the latest page,
    shown oldest first)."""
    with reporting_errors():
        page = client(ctx).get(f"/nodes/{name}/exchanges", limit=limit, before=before)
        show_page(page, as_json, render_messages)
