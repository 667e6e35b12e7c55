"""parley serve: run the hub, the local node and the HTTP API in this process."""

from __future__ import annotations

from pathlib import Path

import typer

from parley.cli.output import reporting_errors


def serve(
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="default ./parley-data [PARLEY_DATA_DIR]"
    ),
    host: str | None = typer.Option(None, "--host", help="default 127.0.0.1 [PARLEY_HOST]"),
    port: int | None = typer.Option(None, "--port", help="default 8700 [PARLEY_PORT]"),
    database_url: str | None = typer.Option(
        None,
        "--database-url",
        help="default SQLite in the data dir [PARLEY_DATABASE_URL: a URL with a password goes"
        " there or in parley.toml, since command lines are readable by every process]",
    ),
    log_level: str | None = typer.Option(None, "--log-level", help="debug|info|warning|error"),
    access_log: bool | None = typer.Option(
        None,
        "--access-log/--no-access-log",
        help="log every HTTP request (default off) [PARLEY_ACCESS_LOG]",
    ),
    public_url: str | None = typer.Option(
        None,
        "--public-url",
        help="how peer installations and brains reach this one; default the URL it listens on"
        " [PARLEY_PUBLIC_URL]",
    ),
    broker: str | None = typer.Option(
        None,
        "--broker",
        help="a NATS broker for nodes on other machines: nats://HOST:4222; default in process"
        " [PARLEY_BROKER]",
    ),
    insecure_broker: bool | None = typer.Option(
        None,
        "--insecure-broker",
        help="use a --broker that lets anyone in (a laptop only: whoever reaches it reads every"
        " turn) [PARLEY_INSECURE_BROKER]",
    ),
    local_node: bool | None = typer.Option(
        None,
        "--local-node/--no-local-node",
        help="host a node in this process (default), or none: turns run on joined machines only"
        " [PARLEY_LOCAL_NODE]",
    ),
) -> None:
    """Start Parley: store, broker, local node and HTTP API (Ctrl-C stops it). One server per
    data folder: a second one on the same folder refuses to start."""
    # The server (FastAPI, SQLAlchemy, uvicorn…) is loaded here only, so that every other
    # command starts without it.
    from parley.cli.event_loop import leave_at_once, loading_for_good

    with loading_for_good():
        from parley.cli.serving import run_server
        from parley.settings import load_settings

    with reporting_errors():
        settings = load_settings(
            data_dir=data_dir,
            host=host,
            port=port,
            database_url=database_url,
            log_level=log_level,
            access_log=access_log,
            public_url=public_url,
            broker=broker,
            insecure_broker=insecure_broker,
            local_node=local_node,
        )
        run_server(settings)
    leave_at_once()
