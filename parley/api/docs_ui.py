"""/docs: the API browsable in Swagger UI, served from the installed ``swagger-ui-bundle-v2``
package, so that it works on a machine without the Internet (FastAPI's own page loads it from a
CDN). Neither the page nor its assets need a token; "Authorize" takes one for the calls made
from the page (the OpenAPI document declares the bearer scheme, see openapi.py)."""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse
from swagger_ui_bundle import swagger_ui_path

DOCS = "/docs"
ASSETS = "/docs/assets"
# The validator would fetch a badge from swagger.io: off, like every other outside address.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None, "persistAuthorization": False}
INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)


def install_docs(app: FastAPI) -> None:
    app.mount(ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="swagger-ui")
    openapi_url = app.openapi_url or "/openapi.json"

    page = get_swagger_ui_html(
        openapi_url=openapi_url,
        title=f"{app.title}: the HTTP API",
        swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
    )
    body = bytes(page.body)
    policy = {"Content-Security-Policy": _policy(body)}

    @app.get(DOCS, include_in_schema=False)
    async def docs() -> HTMLResponse:
        return HTMLResponse(body, headers=policy)


def _policy(html: bytes) -> str:
    """The page's: its own inline script (the one that starts Swagger UI) allowed by its hash,
    nothing else inline but styles (Swagger UI sets some), and no framing."""
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
        for script in INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline';"
        " img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    )
