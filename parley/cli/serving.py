"""The server side of ``parley serve``: hold the data folder, take the port, reach the broker
(NATS, when one is given), run until Ctrl-C or SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Iterator
from types import FrameType

import uvicorn
from fastapi import FastAPI

from parley.app import create_app
from parley.broker.nats_url import parse_nats_url
from parley.broker.port import Broker
from parley.cli.event_loop import run_long_lived, started_for_good
from parley.clock import SystemClock
from parley.datafolder import DataFolder, announcing_url, holding_server_lock
from parley.errors import Unavailable
from parley.process_secrets import protect_process
from parley.settings import Settings
from parley.startup import running

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_SECONDS = 2
# uvicorn's own list (uvicorn.server.HANDLED_SIGNALS, not promised to stay), else its value.
HANDLED_SIGNALS = getattr(uvicorn.server, "HANDLED_SIGNALS", (signal.SIGINT, signal.SIGTERM))
# What ParleyServer overrides of uvicorn's Server: a uvicorn without them would not call Parley's.
OVERRIDDEN = ("handle_exit", "capture_signals")


def run_server(settings: Settings) -> None:
    protect_process()  # its environment holds keys and passwords: no brain reads it in /proc
    if settings.broker is not None:
        parse_nats_url(settings.broker)  # a bad URL is refused before anything starts
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    with holding_server_lock(DataFolder(settings.data_dir), settings.base_url):
        listener = _listen(settings)
        try:
            run_long_lived(_serve(settings, listener))
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
    from parley.mesh.hub_broker import connect_hub

    broker = await connect_hub(settings, settings.broker)  # refused: one line, and no start
    try:
        await _serve_on(settings, listener, broker)
    finally:
        await broker.close()


async def _serve_on(settings: Settings, listener: socket.socket, broker: Broker | None) -> None:
    async with running(settings, SystemClock(), broker) as context:
        app = create_app(settings, context=context)
        # Open pages keep event streams open: past this, a stopping server ends them.
        config = uvicorn.Config(
            app,
            log_level=settings.log_level,
            access_log=settings.access_log,
            timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        )
        if settings.log_level == "info":
            # uvicorn's own start and stop lines say what Parley's say, in another format.
            logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
        url = listening_url(settings.host, listener.getsockname()[1])
        with announcing_url(DataFolder(settings.data_dir), url):
            print(f"Parley listens on {url} (the page: {url}/, API docs: {url}/docs)", flush=True)
            _say_what_uvicorn_lacks()
            started_for_good()
            await ParleyServer(config, app).serve(sockets=[listener])


class ParleyServer(uvicorn.Server):
    """Told to stop (from any thread), it first ends the page's event streams, which would
    otherwise hold the server until its graceful shutdown's timeout; and once stopped, it lets
    Parley shut down."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self._app = app
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets=sockets)

    def end_streams(self) -> None:
        """End the page's event streams, from any thread."""
        web = getattr(self._app.state, "web", None)
        if web is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(web.pulse.close)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.end_streams()
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's, less raising the signal again once the server stopped: a SIGTERM raised
        then killed the process before Parley shut down (its store left open with its log
        unfolded, its address left in the data folder, the broker not told). Parley exits 0
        once it has shut down."""
        if threading.current_thread() is not threading.main_thread():
            yield  # signals are heard by the main thread only
            return
        handlers = {sig: signal.signal(sig, self.handle_exit) for sig in HANDLED_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)


def _say_what_uvicorn_lacks() -> None:
    """A uvicorn without a method ParleyServer overrides serves all the same, but uvicorn's own
    stop (raising SIGTERM again) may end the process before Parley shut down: said once."""
    for name in OVERRIDDEN:
        if not hasattr(uvicorn.Server, name):
            log.warning(
                "uvicorn's Server has no %s (a uvicorn Parley was not tested with;"
                " requirements.lock has the tested one): a stop may not let Parley shut down",
                name,
            )


def listening_url(host: str, port: int) -> str:
    """The URL a client on this machine reaches: a wildcard address is reached on loopback."""
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
