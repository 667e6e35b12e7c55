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
from markupsafe import Markup

from parley import __version__
from parley.clock import Clock
from parley.web.failed import HELPERS, FailedForms
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


def when(value: datetime | None, now: datetime) -> Markup:
    """A moment as people read it: how long ago (or how soon), the full time on hover."""
    if value is None:
        return Markup("")
    full = value.strftime("%Y-%m-%d %H:%M:%S")
    return Markup('<time datetime="{}" title="{}">{}</time>').format(
        value.isoformat(), full, _relative(value, now, full)
    )


def _relative(value: datetime, now: datetime, full: str) -> str:
    seconds = (now - value).total_seconds()
    ago, span = seconds >= 0, abs(seconds)
    if span < MINUTE:
        return "just now" if ago else "in a moment"
    for size, unit in ((DAY, "day"), (HOUR, "h"), (MINUTE, "min")):
        if span >= size:
            count = int(span // size)
            if unit == "day" and count > WEEK_DAYS:
                return full[:10]  # a date is clearer than "40 days ago"
            words = f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''}"
            return f"{words} ago" if ago else f"in {words}"
    raise AssertionError("unreachable: a span of a minute or more has a unit")


MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
WEEK_DAYS = 7


class Pages:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.env = Environment(
            loader=PackageLoader("parley.web", "templates"),
            autoescape=select_autoescape(["html"]),
            undefined=StrictUndefined,  # a template naming a value not given fails in tests
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["when"] = lambda value: when(value, self._clock.now())
        self.env.filters["pretty_json"] = _pretty_json
        self.env.globals.update(version=__version__, nav=NAV, **HELPERS)
        self.failed = FailedForms(clock)

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
            failed=self.failed.take(viewer.form_token) if viewer else None,
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
