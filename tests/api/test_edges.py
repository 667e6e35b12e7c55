"""The HTTP edge: authentication, the error shape, malformed input, health and docs."""

from __future__ import annotations

from tests.support import Harness, items


async def test_healthz_answers_without_a_token(parley: Harness) -> None:
    async with parley.client() as anonymous:
        response = await anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["store"] == parley.context.store.dialect


async def test_openapi_is_served_at_docs(parley: Harness) -> None:
    async with parley.client() as anonymous:
        docs = await anonymous.get("/docs")
        spec = await anonymous.get("/openapi.json")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    assert "/api/v1/agents" in spec.json()["paths"]


async def test_a_call_without_a_token_is_refused_with_401(parley: Harness) -> None:
    async with parley.client() as anonymous:
        response = await anonymous.get("/api/v1/agents")
    assert response.status_code == 401
    assert response.json() == {
        "error": "unauthorized",
        "message": "no API token: send 'Authorization: Bearer <token>'",
    }


async def test_an_unknown_token_is_refused_with_401(parley: Harness) -> None:
    async with parley.client("pk_not-a-real-token") as stranger:
        response = await stranger.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["message"] == "this API token is not known here"


async def test_a_non_bearer_authorization_is_refused(parley: Harness) -> None:
    async with parley.client() as anonymous:
        response = await anonymous.get("/api/v1/me", headers={"Authorization": "Basic abc"})
    assert response.status_code == 401
    assert "Bearer" in response.json()["message"]


async def test_malformed_json_is_a_400_that_says_so_and_changes_nothing(parley: Harness) -> None:
    response = await parley.owner.post(
        "/api/v1/agents", content=b'{"name": "bob", ', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
    assert "not valid JSON" in response.json()["message"]
    agents = items((await parley.owner.get("/api/v1/agents")).json())
    assert [agent["name"] for agent in agents] == ["node:local"]


async def test_missing_and_unknown_fields_are_named(parley: Harness) -> None:
    response = await parley.owner.post("/api/v1/agents", json={"name": "bob", "colour": "red"})
    assert response.status_code == 400
    message = response.json()["message"]
    assert "node: Field required" in message
    assert "colour: Extra inputs are not permitted" in message


async def test_an_unknown_path_answers_in_the_same_error_shape(parley: Harness) -> None:
    response = await parley.owner.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
