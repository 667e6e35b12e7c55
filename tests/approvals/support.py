"""The person who decides the calls that ask first: what waits for them, and their decision.
(The agent whose calls ask is started with ``tests.brains.providers.with_model``.)"""

from __future__ import annotations

from typing import Any

import httpx

from tests.support import eventually, items


async def waiting(client: httpx.AsyncClient, count: int = 1) -> list[dict[str, Any]]:
    """The approvals waiting for ``client``'s person, once there are ``count``."""
    found: list[dict[str, Any]] = []

    async def there() -> bool:
        nonlocal found
        response = await client.get("/api/v1/me/approvals")
        assert response.status_code == 200, response.text
        found = items(response.json())
        return len(found) >= count

    assert await eventually(there), f"no {count} approval(s) came: {found}"
    return found


async def decide(
    client: httpx.AsyncClient, approval_id: int, verb: str, status: int = 200, **body: Any
) -> dict[str, Any]:
    response = await client.post(f"/api/v1/approvals/{approval_id}/{verb}", json=body)
    assert response.status_code == status, response.text
    answer = response.json()
    assert isinstance(answer, dict)
    return answer
