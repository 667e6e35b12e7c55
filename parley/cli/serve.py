"""parley serve: run the hub, the local node and the HTTP API in this process."""

from __future__ import annotations

import logging
from pathlib import Path

import typer
import uvicorn

from parley.app import create_app
from parley.cli.output import reporting_errors
from parley.settings import load_settings


def serve(
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="default ./parley-data [PARLEY_DATA_DIR]"
    ),
    host: str | None = typer.Option(None, "--host", help="default 127.0.0.1 [PARLEY_HOST]"),
    port: int | None = typer.Option(None, "--port", help="default 8700 [PARLEY_PORT]"),
    database_url: str | None = typer.Option(
        None, "--database-url", help="default SQLite in the data dir [PARLEY_DATABASE_URL]"
    ),
    log_level: str | None = typer.Option(None, "--log-level", help="debug|info|warning|error"),
) -> None:
    """Start Parley: store, broker, local node and HTTP API (Ctrl-C stops it)."""
    with reporting_errors():
        settings = load_settings(
            data_dir=data_dir, host=host, port=port, database_url=database_url, log_level=log_level
        )
        logging.basicConfig(
            level=settings.log_level.upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        app = create_app(settings)
        uvicorn.run(app, host=settings.host, port=settings.port, log_level=settings.log_level)
