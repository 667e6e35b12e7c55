"""Apps made in one process share their included routes (FastAPI reads each router's endpoints
once, not at each app's first request): each app still answers from its own state alone."""

from __future__ import annotations

from pathlib import Path

from parley.settings import Settings
from tests.support import ManualClock, started


async def test_two_apps_share_routes_and_each_answers_from_its_own_store(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    other = settings.model_copy(
        update={
            "data_dir": tmp_path / "other",
            "database_url": f"sqlite:///{tmp_path / 'other.db'}",
        }
    )
    async with started(settings, clock) as first, started(other, clock) as second:
        await first.hire("scribe")
        await second.hire("clerk")
        first_routes = first.transport.app.router.routes  # type: ignore[attr-defined]
        second_routes = second.transport.app.router.routes  # type: ignore[attr-defined]
        shared = {id(route) for route in first_routes} & {id(route) for route in second_routes}
        assert len(shared) >= 3  # the API's, the pages' and the peers' routes
        seen = [
            [agent["name"] for agent in (await harness.owner.get("/api/v1/agents")).json()["items"]]
            for harness in (first, second)
        ]
        page = await second.owner.get("/api/v1/agents/scribe")
    assert "scribe" in seen[0] and "clerk" not in seen[0]
    assert "clerk" in seen[1] and "scribe" not in seen[1]
    assert page.status_code == 404
