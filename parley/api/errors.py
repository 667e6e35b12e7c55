"""The one place errors become HTTP: status plus ``{"error": ..., "message": ...}``."""

from __future__ import annotations

import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from parley.errors import (
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    ParleyError,
    Throttled,
    TooLarge,
    Unauthorized,
    Unavailable,
)

log = logging.getLogger(__name__)

STATUS = {
    TooLarge: 413,
    Invalid: 400,
    Unauthorized: 401,
    Throttled: 429,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    Unavailable: 503,
}


def status_of(error: ParleyError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def error_response(error: ParleyError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(error, Unauthorized) else None
    if isinstance(error, Throttled):
        headers = {"Retry-After": str(error.fields.get("retry_after_seconds", 60))}
    return JSONResponse(error.to_dict(), status_code=status_of(error), headers=headers)


def describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        location = ".".join(str(p) for p in err["loc"] if p != "body") or "body"
        if err["type"] == "json_invalid":
            parts.append(
                f"the body is not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})"
            )
        else:
            parts.append(f"{location}: {err['msg']}")
    return "bad request: " + "; ".join(parts)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route takes on this path (Starlette names only the first route's),
    read from the OpenAPI document, which lists them all."""
    methods: set[str] = set()
    for template, operations in request.app.openapi()["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), request.url.path):
            methods |= {method.upper() for method in operations}
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


def install_error_handlers(app: FastAPI) -> None:
    async def parley_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ParleyError)
        return error_response(exc)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(Invalid(describe_validation(exc)))

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            exc.headers = {"Allow": ", ".join(allowed_methods(request))}
        # 400: a body FastAPI could not even parse (a NUL inside what is not JSON, say).
        code = {400: "invalid", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}.get(
            exc.status_code, "error"
        )
        return JSONResponse(  # its headers too: a 405 says what is Allowed
            {"error": code, "message": str(exc.detail)},
            status_code=exc.status_code,
            headers=exc.headers,
        )

    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error", exc_info=exc)
        return JSONResponse(
            {"error": "internal", "message": "an unexpected error happened; see the server log"},
            status_code=500,
        )

    app.add_exception_handler(ParleyError, parley_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
