"""parley serve: run the hub, the local node and the HTTP API in this process."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import typer
import uvicorn

from parley.app import create_app
from parley.cli.output import reporting_errors
from parley.clock import SystemClock
from parley.datafolder import DataFolder, holding_server_lock
from parley.errors import Unavailable
from parley.settings import Settings, load_settings
from parley.startup import running


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
    """Start Parley: store, broker, local node and HTTP API (Ctrl-C stops it). One server per
    data folder: a second one on the same folder refuses to start."""
    with reporting_errors():
        settings = load_settings(
            data_dir=data_dir, host=host, port=port, database_url=database_url, log_level=log_level
        )
        logging.basicConfig(
            level=settings.log_level.upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        with holding_server_lock(DataFolder(settings.data_dir), settings.base_url):
            listener = _listen(settings)
            try:
                asyncio.run(_serve(settings, listener))
            except KeyboardInterrupt:
                pass
            finally:
                listener.close()


def _listen(settings: Settings) -> socket.socket:
    """Take the port before starting anything, so a busy port is a plain error, not a half start."""
    try:
        listener = socket.create_server((settings.host, settings.port), reuse_port=False)
    except OSError as exc:
        raise Unavailable(
            f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}"
        ) from exc
    return listener


async def _serve(settings: Settings, listener: socket.socket) -> None:
    async with running(settings, SystemClock()) as context:
        app = create_app(settings, context=context)
        config = uvicorn.Config(app, log_level=settings.log_level)
        await uvicorn.Server(config).serve(sockets=[listener])
