"""A hub process for bench/mesh.py and the many-machines tests: ``parley serve`` on a NATS
broker, run as ``python -m bench.mesh_hub DATA_DIR DATABASE_URL BROKER_URL PORT`` (its other
settings from PARLEY_* variables)."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import uvicorn

from parley.app import create_app
from parley.cli.serving import listening_url, tcp_listener
from parley.clock import SystemClock
from parley.mesh.nats_broker import NatsBroker
from parley.settings import load_settings
from parley.startup import running


async def _main(data_dir: str, database_url: str, broker_url: str, port: int) -> None:
    settings = load_settings(
        data_dir=Path(data_dir),
        database_url=database_url,
        port=port,
    )
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    listener = tcp_listener("127.0.0.1", port)
    broker = await NatsBroker.connect(broker_url)
    try:
        async with running(settings, SystemClock(), broker) as context:
            app = create_app(settings, context=context)
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
            print(f"Parley listens on {listening_url('127.0.0.1', port)}", flush=True)
            await server.serve(sockets=[listener])
    finally:
        await broker.close()
        listener.close()


if __name__ == "__main__":
    data_dir, database_url, broker_url, port = sys.argv[1:5]
    asyncio.run(_main(data_dir, database_url, broker_url, int(port)))
