"""/docs works without the Internet: its page and assets come from this server, need no token,
and answer with their types; the OpenAPI document behind it gives every operation a summary and
every body an example that the API takes, and declares the bearer scheme for "Authorize"."""

from __future__ import annotations

import re
from typing import Any

import pytest

from parley.api.schemas.base import Body
from parley.app import create_app
from parley.settings import Settings
from tests.support import Harness

TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


@pytest.fixture
def spec() -> dict[str, Any]:
    return create_app(Settings()).openapi()


def operations(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, methods in spec["paths"].items()
        for method, operation in methods.items()
    ]


async def test_the_page_loads_nothing_from_another_host(parley: Harness) -> None:
    async with parley.client() as anonymous:
        page = await anonymous.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert re.findall(r"(?:https?:)?//[\w.-]+", page.text) == []
    assert '"validatorUrl": null' in page.text  # Swagger UI's validator would call swagger.io


async def test_every_asset_of_the_page_answers_with_its_type_without_a_token(
    parley: Harness,
) -> None:
    async with parley.client() as anonymous:
        page = (await anonymous.get("/docs")).text
        assets = re.findall(r"(?:src|href)=\"([^\"]+)\"", page)
        assert {asset[asset.rfind(".") :] for asset in assets} == set(TYPES)
        for asset in assets:
            answer = await anonymous.get(asset)
            assert answer.status_code == 200, asset
            assert answer.headers["content-type"].startswith(TYPES[asset[asset.rfind(".") :]])
        document = await anonymous.get(re.findall(r"url: '([^']+)'", page)[0])
    assert document.status_code == 200
    assert document.headers["content-type"] == "application/json"


async def test_the_body_cap_holds_for_the_page_and_its_assets(parley: Harness) -> None:
    limit = parley.context.settings.max_body_bytes
    async with parley.client() as anonymous:
        for path in ("/docs", "/docs/assets/swagger-ui.css"):
            answer = await anonymous.post(path, content=b"x" * (limit + 1))
            assert answer.status_code == 413, path
            assert answer.json()["error"] == "too_large"


def test_the_bearer_scheme_is_declared_for_every_api_operation(spec: dict[str, Any]) -> None:
    scheme = spec["components"]["securitySchemes"]["bearer"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    for name, operation in operations(spec):
        if " /api/v1/" in name:
            assert operation["security"] == [{"bearer": []}], name


def test_every_operation_has_a_summary_taken_from_its_description(spec: dict[str, Any]) -> None:
    for name, operation in operations(spec):
        description = " ".join(operation.get("description", "").split())
        assert description, f"{name} has no description (give its route a docstring)"
        summary = operation["summary"]
        assert len(summary.split()) >= 2, f"{name}: the summary {summary!r} says too little"
        assert description.lower().startswith(summary.lower()), name


def test_every_body_has_an_example_the_api_takes(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    bodies = {model.__name__: model for model in _subclasses(Body)}
    with_body = [(name, op) for name, op in operations(spec) if "requestBody" in op]
    assert len(with_body) >= 15
    for name, operation in with_body:
        reference = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        schema_name = reference.rsplit("/", 1)[-1]
        examples = schemas[schema_name].get("examples")
        assert examples, f"{name}: its body {schema_name} has no example"
        for example in examples:
            bodies[schema_name].model_validate(example)  # raises if the API would refuse it


def test_the_first_clause_ends_at_a_stop_not_inside_an_abbreviation() -> None:
    from parley.api.openapi import first_clause

    assert first_clause("give text, e.g. a question; it waits") == "Give text, e.g. a question"
    assert first_clause("Nodes by name.") == "Nodes by name"


def _subclasses(model: type[Body]) -> list[type[Body]]:
    found = []
    for sub in model.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found
