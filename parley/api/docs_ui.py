"""/docs: the API browsable in Swagger UI, served from the installed ``swagger-ui-bundle-v2``
package, so that it works on a machine without the Internet (FastAPI's own page loads it from a
CDN). Neither the page nor its assets need a token; "Authorize" takes one for the calls made
from the page (the OpenAPI document declares the bearer scheme, see openapi.py)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse
from swagger_ui_bundle import swagger_ui_path

DOCS = "/docs"
ASSETS = "/docs/assets"
# The validator would fetch a badge from swagger.io: off, like every other outside address.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None, "persistAuthorization": False}


def install_docs(app: FastAPI) -> None:
    app.mount(ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="swagger-ui")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get(DOCS, include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title}: the HTTP API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
            swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
        )
