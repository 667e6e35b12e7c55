"""The CLI's HTTP client: where Parley is, who we are, and errors turned back into our tree.

It speaks HTTP with the standard library's ``http.client``: a client command's start-up is
mostly imports, and an HTTP library with its own stack costs more at each start (about 70 ms
here) than a one-shot command ever gains from it. One connection per request: the server is
usually on loopback, and a stream being followed never blocks a second call (``/stop``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from parley import __version__
from parley.cli.where import whereabouts
from parley.datafolder import DataFolder
from parley.errors import ERRORS_BY_CODE, Invalid, ParleyError, Unauthorized, Unavailable

if TYPE_CHECKING:
    import http.client

CONNECT_TIMEOUT, READ_TIMEOUT = 5.0, 60.0
API = "/api/v1"


class ApiClient:
    def __init__(self, base_url: str, token: str | None) -> None:
        self.base_url = base_url
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Invalid(f"not an http(s) URL for Parley: {base_url!r}", field="url")
        self._secure = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._prefix = parts.path.rstrip("/") + API
        self._headers = {"Accept": "application/json", "User-Agent": f"parley/{__version__}"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"

    def get(self, path: str, **params: Any) -> Any:
        """GET with query parameters; those given as None are left out."""
        given = {name: value for name, value in params.items() if value is not None}
        return self._call("GET", path + (f"?{urlencode(given, doseq=True)}" if given else ""))

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._call("POST", path, body)

    def put(self, path: str, body: dict[str, Any]) -> Any:
        return self._call("PUT", path, body)

    def patch(self, path: str, body: dict[str, Any]) -> Any:
        return self._call("PATCH", path, body)

    def delete(self, path: str) -> Any:
        return self._call("DELETE", path)

    def stream_lines(self, path: str) -> Iterator[Any]:
        """GET newline-delimited JSON and yield each object as soon as its line arrives. A
        followed run may think for as long as it likes: no read timeout once connected."""
        with self._exchange("GET", path, None, streaming=True) as response:
            if response.status >= 300:
                raise _error_from(response.status, response.read())
            while line := response.readline():
                if line.strip():
                    yield json.loads(line)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        with self._exchange(method, path, body) as response:
            content = response.read()
        if response.status >= 300:
            raise _error_from(response.status, content)
        return json.loads(content) if content else None

    @contextmanager
    def _exchange(
        self, method: str, path: str, body: dict[str, Any] | None, *, streaming: bool = False
    ) -> Iterator[http.client.HTTPResponse]:
        """One request on a connection of its own; transport trouble becomes ``Unavailable``."""
        import http.client  # here: --help and --version never load it (mail parsing, ssl)

        kind = http.client.HTTPSConnection if self._secure else http.client.HTTPConnection
        connection = kind(self._host, self._port, timeout=CONNECT_TIMEOUT)
        headers = dict(self._headers)
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            connection.connect()
            if connection.sock is not None:
                connection.sock.settimeout(None if streaming else READ_TIMEOUT)
            connection.request(method, self._prefix + path, body=payload, headers=headers)
            yield connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            raise self._unreachable(exc) from exc
        finally:
            connection.close()

    def _unreachable(self, exc: BaseException) -> Unavailable:
        detail = str(exc) or type(exc).__name__
        return Unavailable(
            f"cannot reach Parley at {self.base_url} ({detail}); is 'parley serve' running?"
        )


def _error_from(status: int, content: bytes) -> ParleyError:
    try:
        body = json.loads(content)
        code, message = body["error"], body["message"]
    except (ValueError, KeyError, TypeError):
        text = content.decode(errors="replace")[:500]
        return ParleyError(f"HTTP {status}: {text}")
    return ERRORS_BY_CODE.get(code, ParleyError)(message)


def client_from_environment(url: str | None, token: str | None) -> ApiClient:
    """URL: --url, PARLEY_URL, or host/port from settings. Token: --token, PARLEY_TOKEN, or the
    owner token file in the data directory (written at first start)."""
    where = whereabouts()
    base_url = url or os.environ.get("PARLEY_URL") or where.base_url
    token = token or os.environ.get("PARLEY_TOKEN") or _read_token_file(where.data_dir)
    if not token:
        raise Unauthorized(
            f"no API token: pass --token, set PARLEY_TOKEN, or run from where"
            f" {DataFolder(where.data_dir).owner_token} exists"
        )
    return ApiClient(base_url, token)


def _read_token_file(data_dir: Path) -> str | None:
    # Where a server older than data_dir/private/ left it, until that server's next start.
    for path in (DataFolder(data_dir).owner_token, data_dir / "owner-token"):
        try:
            return path.read_text().strip() or None
        except OSError:
            continue
    return None
