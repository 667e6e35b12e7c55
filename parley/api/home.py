"""GET /: a small page saying what answers here and where its API is described (until Parley
has a web page of its own). Unauthenticated, like /healthz: it tells nothing but the version."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from parley import __version__

router = APIRouter()

PAGE = f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Parley {__version__}</title></head>
<body>
<h1>Parley {__version__}</h1>
<p>A self-hosted home for persistent AI agents. This is its HTTP API, under
<code>/api/v1</code>; the command line, <code>parley</code>, talks to it.</p>
<ul>
<li><a href="/docs">/docs</a>: the API's documentation</li>
<li><a href="/openapi.json">/openapi.json</a>: its OpenAPI schema</li>
<li><a href="/healthz">/healthz</a>: whether the server and its store answer</li>
</ul>
</body>
</html>
"""


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def home() -> HTMLResponse:
    return HTMLResponse(PAGE)
