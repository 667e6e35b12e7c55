"""The server side of ``parley serve``: hold the data folder, take the port, reach the broker
(NATS, when one is given), run until Ctrl-C."""

from __future__ import annotations

import asyncio
import logging
import socket

import uvicorn

from parley.app import create_app
from parley.clock import SystemClock
from parley.datafolder import DataFolder, announcing_url, holding_server_lock
from parley.errors import Unavailable
from parley.mesh.broker import Broker
from parley.mesh.nats_url import parse_nats_url
from parley.settings import Settings
from parley.startup import running


def run_server(settings: Settings) -> None:
    if settings.broker is not None:
        parse_nats_url(settings.broker)  # a bad URL is refused before anything starts
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
        listener = tcp_listener(settings.host, settings.port)
    except OSError as exc:
        raise Unavailable(
            f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}"
        ) from exc
    return listener


def tcp_listener(host: str, port: int) -> socket.socket:
    """A listening socket made with its protocol named (``IPPROTO_TCP``): asyncio turns Nagle's
    algorithm off only on connections of such a socket, and with it on, a kept-alive client
    (a peer installation's sender) waited ~40 ms for each answer's body (its delayed ACK)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP,
        flags=socket.AI_PASSIVE,
    )[0]  # fmt: skip
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen()
    except OSError:
        listener.close()
        raise
    return listener


async def _serve(settings: Settings, listener: socket.socket) -> None:
    if settings.broker is None:
        await _serve_on(settings, listener, None)
        return
    # Loaded only for a broker of several machines.
    from parley.mesh.nats_broker import NatsBroker

    broker = await NatsBroker.connect(settings.broker)  # unreachable: Unavailable, one line
    try:
        await _serve_on(settings, listener, broker)
    finally:
        await broker.close()


async def _serve_on(settings: Settings, listener: socket.socket, broker: Broker | None) -> None:
    async with running(settings, SystemClock(), broker) as context:
        app = create_app(settings, context=context)
        config = uvicorn.Config(app, log_level=settings.log_level)
        url = listening_url(settings.host, listener.getsockname()[1])
        with announcing_url(DataFolder(settings.data_dir), url):
            print(f"Parley listens on {url} (the page: {url}/, API docs: {url}/docs)", flush=True)
            await uvicorn.Server(config).serve(sockets=[listener])


def listening_url(host: str, port: int) -> str:
    """The URL a client on this machine reaches: a wildcard address is reached on loopback."""
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
