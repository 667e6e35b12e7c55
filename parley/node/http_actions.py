"""The Actions port for turns on a node without the hub's store: each action goes to the hub's
HTTP API (``/api/v1/act/…``) under the run's token, as a command brain's ``parley act`` does, so
the hub checks it exactly as it checks an action taken in its own process."""

from __future__ import annotations

from collections.abc import Mapping

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
        try:
            response = await self._client.post(
                f"{self._url}/act/{ACTIONS[name].path}",
                json=checked,
                headers={"Authorization": f"Bearer {self._token}"},
            )
        except httpx.HTTPError as exc:
            raise Unavailable(f"cannot reach the hub at {self._url} to {name}: {exc!r}") from exc
        if response.is_error:
            raise refusal(response)
        result = response.json().get("result")
        return result if isinstance(result, str) else ""


def refusal(response: httpx.Response) -> ParleyError:
    """The hub's error, as the same class of our tree the hub raised."""
    try:
        body = response.json()
        code, message = body["error"], body["message"]
    except (ValueError, KeyError, TypeError):
        return ParleyError(f"the hub answered HTTP {response.status_code}: {response.text[:300]}")
    return ERRORS_BY_CODE.get(code, ParleyError)(message)
