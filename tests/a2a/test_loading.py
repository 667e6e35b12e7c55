"""a2a-sdk's server side is loaded when A2A is used: at start if an agent is exposed, else at
the first call that reaches an A2A route; a call the gate refuses loads nothing. What a client
is answered is the same either way."""

from __future__ import annotations

from parley.a2a.edge import A2ARoutes
from parley.settings import Settings
from tests.support import Harness, ManualClock, bearer, started


def _routes(parley: Harness) -> A2ARoutes:
    app = parley.transport.app
    found = [route for route in app.router.routes if isinstance(route, A2ARoutes)]  # type: ignore[attr-defined]
    [routes] = found
    return routes


async def test_nothing_exposed_loads_nothing_until_a_call_reaches_a_route(parley: Harness) -> None:
    await parley.hire("scribe")
    routes = _routes(parley)
    assert not routes.loaded
    async with parley.client() as anyone:
        refused = await anyone.post("/a2a/scribe", json={"jsonrpc": "2.0", "id": 1})
    assert refused.status_code == 401 and not routes.loaded  # the gate answered
    assert (await parley.owner.post("/api/v1/a2a/agents", json={"agent": "scribe"})).is_success
    async with parley.client() as anyone:
        card = await anyone.get("/a2a/scribe/.well-known/agent-card.json")
        unknown = await anyone.get("/a2a/scribe/nowhere/.well-known/agent-card.json")
        elsewhere = await anyone.get("/nowhere/.well-known/agent-card.json")
    assert card.status_code == 200 and card.json()["name"] == "scribe"
    assert routes.loaded
    # What no A2A route matches is not found, in the app's own shape, as any unknown path.
    assert (unknown.status_code, unknown.json()) == (elsewhere.status_code, elsewhere.json())
    assert unknown.status_code == 404


async def test_an_agent_exposed_loads_it_at_start(settings: Settings, clock: ManualClock) -> None:
    async with started(settings, clock) as parley:
        await parley.hire("scribe")
        assert not _routes(parley).loaded
        assert (await parley.owner.post("/api/v1/a2a/agents", json={"agent": "scribe"})).is_success
        added = await parley.owner.post("/api/v1/a2a/clients", json={"name": "planner"})
        token = added.json()["token"]
    async with started(settings, clock) as again:
        assert _routes(again).loaded
        async with again.client() as client:
            client.headers.update(bearer(token))
            listed = await client.post(
                "/a2a/scribe",
                json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}},
                headers={"A2A-Version": "1.0"},
            )
    assert listed.status_code == 200 and listed.json()["result"]["tasks"] == []
