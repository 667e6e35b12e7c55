"""The socket ``parley serve`` listens on: its connections have Nagle's algorithm off, so that a
kept-alive client (a peer installation's sender posting batch after batch) gets each answer
without waiting for its own delayed ACK."""

from __future__ import annotations

import asyncio
import socket

from parley.cli.serving import tcp_listener


async def test_connections_to_the_listener_have_nagle_off() -> None:
    listener = tcp_listener("127.0.0.1", 0)
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def accepted(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted_socket = writer.get_extra_info("socket")
        seen.set_result(accepted_socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(accepted, sock=listener)
    async with server:
        port = listener.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await asyncio.wait_for(seen, 30) != 0
        writer.close()


def test_a_busy_port_is_refused() -> None:
    first = tcp_listener("127.0.0.1", 0)
    try:
        port = first.getsockname()[1]
        try:
            tcp_listener("127.0.0.1", port)
        except OSError:
            pass
        else:
            raise AssertionError("a second listener took a busy port")
    finally:
        first.close()
