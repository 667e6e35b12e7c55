"""The OpenAPI document as the API really answers: every error is the error tree's body with the
status its class maps to (never FastAPI's 422), the API's routes say they take a bearer
token, so that /docs has a place to enter one, and each operation's summary is the first clause
of its description (the route's docstring), not FastAPI's title-cased function name."""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        "error": {"type": "string", "description": "the error's code, e.g. invalid, not_found"},
        "message": {"type": "string", "description": "what was wrong, in words"},
    },
    "additionalProperties": True,
}

# What any API route may answer besides its success (see parley/errors.py).
API_ERRORS = {
    "400": "the input is malformed or out of range",
    "401": "no token, an unknown one, or one of the wrong kind",
    "403": "known caller, not allowed to do this",
    "404": "no such thing, or not visible to the caller",
    "409": "the thing's state refuses this",
    "413": "the request body is larger than the server takes",
    "429": "too many failed sign-ins or unknown tokens from this address; wait Retry-After",
    "503": "a needed part (store, node) is unavailable",
}
PUBLIC_ERRORS = {"503": API_ERRORS["503"]}


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = documented(
                get_openapi(title=app.title, version=app.version, routes=app.routes)
            )
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


# Where a docstring's first clause ends: a full stop, semicolon or colon before a space or the end.
CLAUSE_END = re.compile(r"(?<!e\.g)(?<!i\.e)[.;:](?=\s|$)")


def first_clause(description: str) -> str:
    text = " ".join(description.split())
    clause = CLAUSE_END.split(text, maxsplit=1)[0]
    return clause[:1].upper() + clause[1:]


def documented(spec: dict[str, Any]) -> dict[str, Any]:
    components = spec.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for fastapi_only in ("HTTPValidationError", "ValidationError"):
        schemas.pop(fastapi_only, None)
    schemas["Error"] = ERROR_SCHEMA
    components["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "a person's API token"}
    }
    for path, operations in spec.get("paths", {}).items():
        on_api = path.startswith("/api/v1/")
        errors = API_ERRORS if on_api or path.startswith("/federation/v1/") else PUBLIC_ERRORS
        for operation in operations.values():
            _document(operation, errors, on_api)
    return spec


def _document(operation: dict[str, Any], errors: dict[str, str], on_api: bool) -> None:
    if operation.get("description"):
        operation["summary"] = first_clause(operation["description"])
    responses = operation.setdefault("responses", {})
    responses.pop("422", None)
    for status, description in errors.items():
        responses[status] = {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    if on_api:
        operation["security"] = [{"bearer": []}]
