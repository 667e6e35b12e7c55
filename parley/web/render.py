"""Turning a page's values into HTML: the Jinja2 templates shipped in the package (autoescaped:
text from people, agents and peers is never taken as markup), and the notice a form's redirect
leaves for the next page."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from parley import __version__
from parley.web.session import SignedIn

NOTICE = "parley_notice"
# (path, label, for owners only: the library lets only owners read those lists)
NAV = [
    ("/", "Chat", False),
    ("/tasks", "Tasks", False),
    ("/runs", "Runs", False),
    ("/turns", "Turns", False),
    ("/agents", "Agents", False),
    ("/nodes", "Nodes", False),
    ("/people", "People", False),
    ("/connections", "Connections", True),
    ("/channels", "Channels", True),
    ("/a2a-access", "A2A", True),
]


def _when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


class Pages:
    def __init__(self) -> None:
        self.env = Environment(
            loader=PackageLoader("parley.web", "templates"),
            autoescape=select_autoescape(["html"]),
            undefined=StrictUndefined,  # a template naming a value not given fails in tests
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["when"] = _when
        self.env.filters["pretty_json"] = _pretty_json
        self.env.globals.update(version=__version__, nav=NAV)

    def html(self, name: str, **values: Any) -> str:
        return self.env.get_template(name).render(**values)

    def page(
        self,
        request: Request,
        name: str,
        viewer: SignedIn | None,
        status: int = 200,
        **values: Any,
    ) -> HTMLResponse:
        notice = request.cookies.get(NOTICE)
        html = self.html(
            name,
            viewer=viewer,
            path=request.url.path,
            notice=notice,
            **values,
        )
        response = HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})
        if notice:
            response.delete_cookie(NOTICE, path="/")
        return response


def back_to(path: str, notice: str | None = None) -> Response:
    """After a form: to the page it came from (303, so a reload does not post again)."""
    response = RedirectResponse(path, status_code=303)
    if notice:
        response.set_cookie(NOTICE, notice[:300], max_age=60, httponly=True, samesite="strict")
    return response


def _pretty_json(text: str) -> str:
    """A JSON text indented for reading (as it is, if it is not JSON)."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text
