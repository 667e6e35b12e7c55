"""The Actions port for turns on a node without the hub's store: each action goes to the hub's
HTTP API (``/api/v1/act/…``) under the run's token, as a command brain's ``parley act`` does, so
the hub checks it exactly as it checks an action taken in its own process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from parley.actions.arguments import bind
from parley.actions.table import ACTIONS
from parley.errors import ERRORS_BY_CODE, ParleyError, Unavailable

API = "/api/v1"


class HttpActions:
    def __init__(self, client: httpx.AsyncClient, parley_url: str, token: str) -> None:
        self._client = client
        self._url = parley_url.rstrip("/") + API
        self._token = token

    async def act(self, name: str, arguments: Mapping[str, object]) -> str:
        checked = bind(name, arguments)  # a malformed call costs no request
        url = f"{self._url}/act/{ACTIONS[name].path}"
        response = await hub_request(self._client, "POST", url, self._token, name, json=checked)
        if response.is_error:
            raise refusal(response)
        result = response.json().get("result")
        return result if isinstance(result, str) else ""


async def hub_request(
    client: httpx.AsyncClient, method: str, url: str, token: str, what: str, **sent: Any
) -> httpx.Response:
    """One request of a turn to the hub under its run token; Unavailable if the hub cannot be
    reached (its answer, error or not, is the caller's to read)."""
    headers = {"Authorization": f"Bearer {token}"}
    try:
        return await client.request(method, url, headers=headers, **sent)
    except httpx.HTTPError as exc:
        raise Unavailable(f"cannot reach the hub at {url} to {what}: {exc!r}") from exc


def refusal(response: httpx.Response) -> ParleyError:
    """The hub's error, as the same class of our tree the hub raised."""
    try:
        body = response.json()
        code, message = body["error"], body["message"]
    except (ValueError, KeyError, TypeError):
        return ParleyError(f"the hub answered HTTP {response.status_code}: {response.text[:300]}")
    return ERRORS_BY_CODE.get(code, ParleyError)(message)
