"""No text with a NUL byte gets in through the API: every string of every request body and every
path and query parameter refuses one with a 400 that names where it was, on both stores
(PostgreSQL cannot hold one and answered 500; SQLite kept it). The routes and fields come from
the API's own description, so a new one is checked as soon as it exists."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.runs.support import hold_a_turn
from tests.support import Harness, items

Json = dict[str, Any]
NUL_TEXT = "a\x00b"


def _resolved(spec: Json, schema: Json) -> Json:
    if "$ref" in schema:
        resolved: Json = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        return resolved
    return schema


def _is_text(schema: Json) -> bool:
    return schema.get("type") == "string" or any(
        option.get("type") == "string" for option in schema.get("anyOf", [])
    )


def _sample(schema: Json) -> object:
    kinds = [schema.get("type")] + [option.get("type") for option in schema.get("anyOf", [])]
    if "integer" in kinds:
        return 1
    if "boolean" in kinds:
        return False
    return "x"


def _operations(spec: Json) -> Iterator[tuple[str, str, Json]]:
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            yield method.upper(), path, operation


def _url(path: str, operation: Json, values: dict[str, str] | None = None) -> str:
    """``path`` with each path parameter filled in: a valid-looking value, or the one given."""
    given = values or {}
    kinds = {p["name"]: p["schema"] for p in operation.get("parameters", []) if p["in"] == "path"}
    return re.sub(r"\{(\w+)\}", lambda m: given.get(m[1], str(_sample(kinds[m[1]]))), path)


def _body_schema(spec: Json, operation: Json) -> Json | None:
    body = operation.get("requestBody")
    if body is None:
        return None
    return _resolved(spec, body["content"]["application/json"]["schema"])


def _valid_body(schema: Json | None) -> Json | None:
    if schema is None:
        return None
    properties = schema.get("properties", {})
    return {name: _sample(properties[name]) for name in schema.get("required", [])}


async def _refused(
    client: httpx.AsyncClient, method: str, url: str, where: str, **request: Any
) -> None:
    response = await client.request(method, url, **request)
    assert response.status_code == 400, (method, url, where, response.text)
    answer = response.json()
    assert answer["error"] == "invalid"
    assert answer["message"].startswith(f"{where} contains a NUL byte"), answer


async def _callers(parley: Harness, tmp_path: Path) -> dict[bool, httpx.AsyncClient]:
    """Who may call a route, by whether it is an action: the owner, or a running turn."""
    _, token = await hold_a_turn(parley, tmp_path, "holder")
    return {False: parley.owner, True: parley.client(token)}


def _acting(path: str) -> bool:
    return path.startswith("/api/v1/act/")


async def test_every_text_field_of_every_body_refuses_a_nul_byte(
    parley: Harness, tmp_path: Path
) -> None:
    callers = await _callers(parley, tmp_path)
    spec = (await parley.owner.get("/openapi.json")).json()
    checked = set()
    for method, path, operation in _operations(spec):
        schema = _body_schema(spec, operation)
        if schema is None:
            continue
        for field, field_schema in schema.get("properties", {}).items():
            if not _is_text(field_schema):
                continue
            body = (_valid_body(schema) or {}) | {field: NUL_TEXT}
            url = _url(path, operation)
            await _refused(callers[_acting(path)], method, url, field, json=body)
            checked.add((method, path, field))
    for expected in [
        ("POST", "/api/v1/conversations/{agent}/messages", "text"),
        ("POST", "/api/v1/tasks", "text"),
        ("POST", "/api/v1/runs/{run_id}/answer", "text"),
        ("POST", "/api/v1/agents", "engram"),
        ("POST", "/api/v1/agents/{name}/memory", "note"),
        ("POST", "/api/v1/agents/{name}/warnings", "reason"),
        ("POST", "/api/v1/agents/{name}/retire", "reason"),
        ("PUT", "/api/v1/nodes/{name}/engram", "engram"),
        ("POST", "/api/v1/people", "name"),
        ("POST", "/api/v1/act/send", "to"),
        ("POST", "/api/v1/act/complete", "result"),
    ]:
        assert expected in checked


async def test_every_path_and_query_parameter_refuses_a_nul_byte(
    parley: Harness, tmp_path: Path
) -> None:
    callers = await _callers(parley, tmp_path)
    spec = (await parley.owner.get("/openapi.json")).json()
    checked = set()
    for method, path, operation in _operations(spec):
        body = _valid_body(_body_schema(spec, operation))
        for param in operation.get("parameters", []):
            if param["in"] not in ("path", "query"):
                continue  # a number or a choice too: the NUL is refused before it is read
            name = param["name"]
            if param["in"] == "path":
                url, params = _url(path, operation, {name: "a%00b"}), None
            else:
                url, params = _url(path, operation), {name: NUL_TEXT}
            client = callers[_acting(path)]
            await _refused(client, method, url, name, json=body, params=params)
            checked.add((method, path, name))
    for expected in [
        ("GET", "/api/v1/agents/{name}", "name"),
        ("DELETE", "/api/v1/conversations/{agent}", "agent"),
        ("GET", "/api/v1/agent-conversations/{thread_id}", "thread_id"),
        ("GET", "/api/v1/agents", "lifecycle"),
        ("GET", "/api/v1/runs", "agent"),
        ("POST", "/api/v1/runs/{run_id}/answer", "run_id"),
    ]:
        assert expected in checked


async def test_a_refused_nul_byte_changes_nothing(parley: Harness) -> None:
    await parley.hire("scribe")
    response = await parley.owner.post(
        "/api/v1/agents/scribe/memory", json={"note": "kept\x00secret"}
    )
    assert response.status_code == 400
    assert response.json()["field"] == "note"
    assert items((await parley.owner.get("/api/v1/agents/scribe/memory")).json()) == []
