"""The TLS trust of Parley's own HTTP clients (a peer installation, an A2A agent, a push URL, a
node's hub): the CAs httpx trusts by default (certifi's, or ``SSL_CERT_FILE`` /
``SSL_CERT_DIR``), read once per process and shared, as an ``ssl.SSLContext`` may be. httpx
reads them again for every client it makes, some 30 ms of CPU each: twice at every start, and
at each A2A agent's client."""

from __future__ import annotations

import functools
import ssl
from typing import Any

import httpx


@functools.cache
def trusted() -> ssl.SSLContext:
    return httpx.create_ssl_context()


class ClientOnFirstUse:
    """An ``httpx.AsyncClient`` with this trust, made at its first request: a server that never
    speaks to a peer installation or pushes to an A2A client reads no CAs at its start."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._client: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(verify=trusted(), **self._options)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
