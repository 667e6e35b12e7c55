"""The Approvals port for turns on a joined node: the call is asked at the hub's
``/api/v1/act/approvals`` under the run's token, then the node waits for the decision in long
polls, each one looked at again after a hub that was away comes back (the decision is in the
hub's store, so a restart loses none)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from parley.errors import Unavailable
from parley.node.http_actions import API, hub_request, refusal
from parley.retrying import retrying

# A long poll's wait at the hub, and the client's patience for its answer (a little longer).
POLL_SECONDS = 25.0
POLL_TIMEOUT = POLL_SECONDS + 15.0


class HttpApprovals:
    def __init__(self, client: httpx.AsyncClient, parley_url: str, token: str) -> None:
        self._client, self._token = client, token
        self._url = parley_url.rstrip("/") + API + "/act/approvals"

    async def approve(self, tool: str, arguments: Mapping[str, object]) -> str | None:
        asked = await self._call("POST", self._url, json={"tool": tool, "arguments": arguments})
        approval_id = asked["approval"]["id"]
        while _waiting(asked):
            asked = await retrying(
                lambda: self._call(
                    "GET", f"{self._url}/{approval_id}", params={"wait": POLL_SECONDS}
                ),
                what=f"waiting for approval {approval_id}",
                first=0.5,
                longest=10.0,
            )
        result = asked.get("result")
        return result if isinstance(result, str) else None

    async def _call(self, method: str, url: str, **sent: Any) -> dict[str, Any]:
        response = await hub_request(
            self._client, method, url, self._token, "ask first", timeout=POLL_TIMEOUT, **sent
        )
        if response.status_code >= 500:
            raise Unavailable(f"the hub answered HTTP {response.status_code}")
        if response.is_error:
            raise refusal(response)
        answer: dict[str, Any] = response.json()
        return answer


def _waiting(asked: Mapping[str, Any]) -> bool:
    approval = asked["approval"]
    return bool(approval["state"] == "waiting" and approval["run_state"] == "running")
