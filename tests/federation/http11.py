"""Whole HTTP/1.1 messages over asyncio streams, framed by h11: what the fault proxy reads from
its clients, writes back to them, and sends to its upstream (whole, or cut short)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import h11

READ_SIZE = 65536
Headers = list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class HttpRequest:
    method: str
    target: str
    headers: Headers  # as the client sent them, names in their own case
    body: bytes


@dataclass(frozen=True)
class HttpResponse:
    status: int
    reason: bytes
    headers: Headers
    body: bytes


async def _next_event(connection: h11.Connection, reader: asyncio.StreamReader) -> object:
    while (event := connection.next_event()) is h11.NEED_DATA:
        connection.receive_data(await reader.read(READ_SIZE))  # b"" tells h11 of the end
    return event


async def read_request(
    connection: h11.Connection, reader: asyncio.StreamReader
) -> HttpRequest | None:
    """The next whole request from a client, or None once it closed between requests."""
    head: h11.Request | None = None
    body = bytearray()
    while True:
        event = await _next_event(connection, reader)
        if isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage) and head is not None:
            return HttpRequest(
                head.method.decode(),
                head.target.decode(),
                list(head.headers.raw_items()),
                bytes(body),
            )
        else:  # ConnectionClosed (or a PAUSED connection, which we never leave paused)
            return None


async def write_response(
    connection: h11.Connection, writer: asyncio.StreamWriter, response: HttpResponse
) -> None:
    wire = connection.send(
        h11.Response(status_code=response.status, reason=response.reason, headers=response.headers)
    )
    if response.body:
        wire = (wire or b"") + (connection.send(h11.Data(data=response.body)) or b"")
    wire = (wire or b"") + (connection.send(h11.EndOfMessage()) or b"")
    writer.write(wire)
    await writer.drain()


class Exchange:
    """One request sent to the upstream on a connection of its own, closed afterwards."""

    def __init__(self, host: str, port: int, request: HttpRequest) -> None:
        self.host, self.port = host, port
        self.connection = h11.Connection(h11.CLIENT)
        # The upstream is told its own name, as a reverse proxy does; the rest goes as sent.
        headers = [(n, v) for n, v in request.headers if n.lower() != b"host"]
        head = h11.Request(
            method=request.method,
            target=request.target,
            headers=[(b"host", f"{host}:{port}".encode()), *headers],
        )
        self.head = self.connection.send(head) or b""
        data = self.connection.send(h11.Data(data=request.body)) if request.body else b""
        self.rest = (data or b"") + (self.connection.send(h11.EndOfMessage()) or b"")

    async def run(self) -> HttpResponse | None:
        """The upstream's whole answer, or None if it could not be had."""
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            return None
        try:
            writer.write(self.head + self.rest)
            await writer.drain()
            return await self._read_response(reader)
        except (OSError, h11.ProtocolError):
            return None
        finally:
            await _close(writer)

    async def cut(self, share: float) -> None:
        """Send the head and ``share`` (in [0, 1)) of the body, then close: never all of it.
        Without a body the cut falls inside the head."""
        if self.rest:
            wire = self.head + self.rest[: int(len(self.rest) * share)]
        else:
            wire = self.head[: int(len(self.head) * share)]
        try:
            _, writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            return
        try:
            writer.write(wire)
            await writer.drain()
        except OSError:
            pass
        finally:
            await _close(writer)

    async def _read_response(self, reader: asyncio.StreamReader) -> HttpResponse | None:
        head: h11.Response | None = None
        body = bytearray()
        while True:
            event = await _next_event(self.connection, reader)
            if isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage) and head is not None:
                headers = list(head.headers.raw_items())
                return HttpResponse(head.status_code, head.reason, headers, bytes(body))
            elif not isinstance(event, h11.InformationalResponse):
                return None  # closed before the whole answer


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
