"""The TLS trust of Parley's own HTTP clients (a peer installation, an A2A agent, a push URL, a
node's hub): the CAs httpx trusts by default (certifi's, or ``SSL_CERT_FILE`` /
``SSL_CERT_DIR``), read once per process and shared, as an ``ssl.SSLContext`` may be. httpx
reads them again for every client it makes, some 30 ms of CPU each: twice at every start, and
at each A2A agent's client."""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def trusted() -> ssl.SSLContext:
    return httpx.create_ssl_context()
