"""The CLI's HTTP client: where Parley is, who we are, and errors turned back into our tree."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from parley.cli.where import whereabouts
from parley.datafolder import DataFolder
from parley.errors import ERRORS_BY_CODE, ParleyError, Unauthorized, Unavailable

TIMEOUT = httpx.Timeout(60.0, connect=5.0)
# A followed run may think for as long as it likes: no read timeout while streaming.
STREAM_TIMEOUT = httpx.Timeout(60.0, connect=5.0, read=None)


class ApiClient:
    def __init__(
        self, base_url: str, token: str | None, transport: httpx.BaseTransport | None = None
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url
        self._http = httpx.Client(
            base_url=base_url, headers=headers, timeout=TIMEOUT, transport=transport
        )

    def get(self, path: str, **params: Any) -> Any:
        """GET with query parameters; those given as None are left out."""
        given = {name: value for name, value in params.items() if value is not None}
        return self._call("GET", path, params=given)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._call("POST", path, json=body)

    def put(self, path: str, body: dict[str, Any]) -> Any:
        return self._call("PUT", path, json=body)

    def patch(self, path: str, body: dict[str, Any]) -> Any:
        return self._call("PATCH", path, json=body)

    def delete(self, path: str) -> Any:
        return self._call("DELETE", path)

    def stream_lines(self, path: str) -> Iterator[Any]:
        """GET newline-delimited JSON and yield each object as soon as its line arrives."""
        try:
            with self._http.stream("GET", "/api/v1" + path, timeout=STREAM_TIMEOUT) as response:
                if not response.is_success:
                    response.read()
                    raise _error_from(response)
                for line in response.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, "/api/v1" + path, **kwargs)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc
        if response.is_success:
            return response.json() if response.content else None
        raise _error_from(response)

    def _unreachable(self, exc: httpx.TransportError) -> Unavailable:
        return Unavailable(
            f"cannot reach Parley at {self.base_url} ({exc}); is 'parley serve' running?"
        )


def _error_from(response: httpx.Response) -> ParleyError:
    try:
        body = response.json()
        code, message = body["error"], body["message"]
    except (ValueError, KeyError, TypeError):
        return ParleyError(f"HTTP {response.status_code}: {response.text[:500]}")
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
